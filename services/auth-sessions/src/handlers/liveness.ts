import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { LivenessAdminService, LivenessService } from "@corridor/proto/corridor/auth_sessions/v1/liveness_service_pb.js";
import type { LivenessReviewQueue } from "../domain/sca/liveness.js";
import type { StoredLivenessCheck } from "../domain/sca/ports.js";

const ts = (d: Date | null) => (d ? timestampFromDate(d) : undefined);

const checkMsg = (c: StoredLivenessCheck) => ({
  id: c.id,
  platformId: c.platformId,
  customerId: c.customerId,
  resetId: c.resetId,
  status: c.status,
  environment: c.environment,
  reason: c.reason,
  selfieContentType: c.selfieContentType,
  selfieSizeBytes: BigInt(c.selfieSizeBytes),
  selfieSha256: c.selfieSha256,
  createdAt: ts(c.createdAt),
  submittedAt: ts(c.submittedAt),
  decidedAt: ts(c.decidedAt),
  expiresAt: ts(c.expiresAt),
});

/** LivenessService (the hosted page's calls): proto ↔ domain only. */
export function createLivenessHandler(deps: { liveness: LivenessReviewQueue }): ServiceImpl<typeof LivenessService> {
  return {
    async getLivenessPage(req) {
      const c = await deps.liveness.page.get(req.token);
      return { environment: c.environment, status: c.status, expiresAt: ts(c.expiresAt) };
    },
    async submitLivenessSelfie(req) {
      return { status: await deps.liveness.page.submitSelfie(req.token, req.contentType, req.content) };
    },
    async decideSandboxLiveness(req) {
      return { status: await deps.liveness.page.decideSandbox(req.token, req.outcome) };
    },
  };
}

/** LivenessAdminService (the operator's CLI): proto ↔ domain only. */
export function createLivenessAdminHandler(deps: { liveness: LivenessReviewQueue }): ServiceImpl<typeof LivenessAdminService> {
  return {
    async listLivenessChecks(req) {
      return { checks: (await deps.liveness.admin.list({ status: req.status, platformId: req.platformId, limit: req.limit })).map(checkMsg) };
    },
    async getLivenessCheck(req) {
      return { check: checkMsg(await deps.liveness.admin.get(req.checkId)) };
    },
    async getLivenessSelfie(req) {
      const r = await deps.liveness.admin.selfie(req.checkId);
      return { check: checkMsg(r.check), content: r.content };
    },
    async decideLivenessCheck(req) {
      return { check: checkMsg(await deps.liveness.admin.decide(req.checkId, req.decision, req.reason)) };
    },
  };
}
