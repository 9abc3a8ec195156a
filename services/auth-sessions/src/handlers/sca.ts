import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import { errors } from "@corridor/kit";
import type { ScaService } from "@corridor/proto/corridor/auth_sessions/v1/sca_service_pb.js";
import type { ScaSubjectType } from "../domain/sca/ports.js";
import type { Sca, ScaChallengeView } from "../domain/sca/sca.js";

const SUBJECTS: readonly ScaSubjectType[] = ["QUOTE", "TRUST_BENEFICIARY", "UNTRUST_BENEFICIARY", "LOGIN"];

function subject(type: string): ScaSubjectType {
  if (!(SUBJECTS as readonly string[]).includes(type)) throw errors.invalidInput([{ field: "subjectType", reason: `must be one of ${SUBJECTS.join(", ")}` }]);
  return type as ScaSubjectType;
}

const challengeMsg = (c: ScaChallengeView) => ({
  id: c.id,
  expiresAt: timestampFromDate(c.expiresAt),
  factor: c.factor,
  availableFactors: c.availableFactors,
  purpose: c.purpose,
  authorizedAt: c.authorizedAt ? timestampFromDate(c.authorizedAt) : undefined,
});

/** ScaService: proto ↔ domain only. */
export function createScaHandler(deps: { sca: Sca }): ServiceImpl<typeof ScaService> {
  return {
    async beginAuthorization(req) {
      const r = await deps.sca.beginAuthorization({
        platformId: req.platformId,
        customerId: req.customerId,
        subjectType: subject(req.subjectType),
        subjectId: req.subjectId,
        externalAccountId: req.externalAccountId,
      });
      return { required: r.required, challenge: r.challenge ? challengeMsg(r.challenge) : undefined };
    },
    async authorize(req) {
      return { challenge: challengeMsg(await deps.sca.authorize(req.platformId, subject(req.subjectType), req.subjectId, req.code)) };
    },
    async startTrust(req) {
      return { challenge: challengeMsg(await deps.sca.startTrust({ platformId: req.platformId, customerId: req.customerId, externalAccountId: req.externalAccountId, trust: req.trust })) };
    },
    async confirmTrust(req) {
      const trusted = await deps.sca.confirmTrust({ platformId: req.platformId, externalAccountId: req.externalAccountId, trust: req.trust, code: req.code, challengeId: req.challengeId });
      return { trusted };
    },
    async listFactors(req) {
      return { factors: await deps.sca.factors.list(req.platformId, req.customerId) };
    },
    async startFactorEnrollment(req) {
      return deps.sca.factors.startEnrollment(req.platformId, req.customerId, req.factor);
    },
    async confirmFactorEnrollment(req) {
      return { recoveryCodes: await deps.sca.factors.confirmEnrollment(req.platformId, req.customerId, req.factor, req.secret, req.code) };
    },
    async startLogin(req) {
      const r = await deps.sca.login.start(req.platformId, req.customerId, req.factor);
      return { factor: r.factor, challenge: r.challenge ? challengeMsg(r.challenge) : undefined };
    },
    async completeLogin(req) {
      return { status: await deps.sca.login.complete({ platformId: req.platformId, customerId: req.customerId, factor: req.factor, challengeId: req.challengeId, code: req.code }) };
    },
    async recordSecurityEvent(req) {
      const r = await deps.sca.recordEvent(req.platformId, req.customerId, req.eventType);
      return { eventType: r.eventType, suspended: r.suspended, lockedUntil: r.lockedUntil ? timestampFromDate(r.lockedUntil) : undefined, failedAttempts: r.failedAttempts };
    },
    async startFactorReset(req) {
      const r = await deps.sca.resets.start(req.platformId, req.customerId, req.factor);
      return { resetId: r.resetId, livenessAccessToken: r.livenessAccessToken, verificationPath: r.verificationPath, expiresAt: timestampFromDate(r.expiresAt) };
    },
    async getFactorReset(req) {
      const r = await deps.sca.resets.get(req.platformId, req.customerId, req.resetId);
      return { status: r.status, factor: r.factor, expiresAt: timestampFromDate(r.expiresAt) };
    },
    async completeFactorReset(req) {
      const mobile = req.mobileCountryCode || req.mobileNumber ? { countryCode: req.mobileCountryCode, number: req.mobileNumber } : undefined;
      await deps.sca.resets.complete({ platformId: req.platformId, customerId: req.customerId, resetId: req.resetId, mobile });
      return {};
    },
    async resendCode(req) {
      await deps.sca.resend(req.platformId, subject(req.subjectType), req.subjectId);
      return {};
    },
  };
}
