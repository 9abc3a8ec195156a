import { useState } from "preact/hooks";
import { eventPayload, getEvent, listEvents, redeliverEvent } from "../events.js";
import { formatTime } from "../format.js";
import type { PlatformConfig } from "../types.js";
import { ErrorBox, Facts, Field, Form, Id, Json, Loading, Notice, PAGE_SIZE, Pager, Section, Status, Table, compact, href, navigate, useAction, useApi, useAsync, usePaged, type Route } from "../ui.js";
import { EventRows } from "./transactions.js";

interface WebhookSecret {
  secret: string;
  createdAt: string;
  previousSecretExpiresAt?: string;
}

/** POST /sandbox/webhooks/test: Grid's answer when the endpoint answered (no answer is a 400 WEBHOOK_DELIVERY_FAILED). */
export interface TestWebhookResult {
  url: string;
  response_status: number;
  response_body: string;
}

/** The event types Corridor sends (decisions §8), offered as suggestions in the filter. */
const EVENT_TYPES = [
  ...["PENDING", "PROCESSING", "COMPLETED", "FAILED", "EXPIRED", "REFUND_PENDING", "REFUND_COMPLETED", "REFUND_FAILED"].map((s) => `OUTGOING_PAYMENT_${s}`),
  "INCOMING_PAYMENT_COMPLETED",
  "INCOMING_PAYMENT_FAILED",
  ...["APPROVED", "REJECTED", "PENDING"].flatMap((s) => [`CUSTOMER_KYC_${s}`, `CUSTOMER_KYB_${s}`]),
  ...["APPROVED", "REJECTED", "PENDING", "RESOLVE_ERRORS"].map((s) => `VERIFICATION_${s}`),
  "INTERNAL_ACCOUNT_BALANCE_UPDATED",
  "AGENT_ACTION_PENDING_APPROVAL",
  "INVITATION_CLAIMED",
];

export function WebhooksPage({ route }: { route: Route }) {
  const id = route.path[1];
  return id ? <EventDetail id={id} /> : <WebhooksHome route={route} />;
}

function WebhooksHome({ route }: { route: Route }) {
  return (
    <>
      <div class="page-head">
        <h1>Webhooks</h1>
      </div>
      <div class="two">
        <EndpointCard />
        <SecretCard />
      </div>
      <Deliveries route={route} />
    </>
  );
}

function EndpointCard() {
  const api = useApi();
  const config = useAsync(() => api<PlatformConfig>("GET", "/config"), []);
  const save = useAction<PlatformConfig>();
  const test = useAction<TestWebhookResult>();
  return (
    <Section title="Endpoint">
      <ErrorBox error={config.error} />
      {config.data ? (
        <Form
          onSubmit={(f) =>
            void save.run(() => api<PlatformConfig>("PATCH", "/config", { body: { webhookEndpoint: (f.webhookEndpoint ?? "").trim() } })).then((c) => c && config.reload())
          }
        >
          <Field label="Webhook endpoint" hint="https, or http on localhost. Events are posted here, signed (Standard Webhooks).">
            <input name="webhookEndpoint" type="url" defaultValue={config.data.webhookEndpoint ?? ""} placeholder="https://example.com/hooks" required />
          </Field>
          <ErrorBox error={save.error} />
          {save.result ? <Notice tone="good">Saved.</Notice> : null}
          <div class="row">
            <button type="submit" disabled={save.busy}>
              Save
            </button>
            <button type="button" class="secondary" disabled={test.busy} onClick={() => void test.run(() => api<TestWebhookResult>("POST", "/sandbox/webhooks/test"))}>
              Send a TEST webhook
            </button>
          </div>
          <ErrorBox error={test.error} />
          {test.result ? <TestResult result={test.result} /> : null}
        </Form>
      ) : config.loading ? (
        <Loading />
      ) : null}
    </Section>
  );
}

export function TestResult({ result }: { result: TestWebhookResult }) {
  const delivered = result.response_status >= 200 && result.response_status < 300;
  return (
    <Notice tone={delivered ? "good" : "warn"}>
      TEST webhook to {result.url}: {delivered ? `delivered (HTTP ${result.response_status})` : `not delivered — the endpoint answered HTTP ${result.response_status}`}.
    </Notice>
  );
}

function SecretCard() {
  const api = useApi();
  const secret = useAsync(() => api<WebhookSecret>("GET", "/config/webhook-secret"), []);
  const rotate = useAction<WebhookSecret>();
  const [shown, setShown] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const s = rotate.result ?? secret.data;
  return (
    <Section title="Signing secret">
      <ErrorBox error={secret.error} />
      {s ? (
        <>
          <Facts
            rows={[
              [
                "Secret",
                <span class="secret">
                  <code>{shown ? s.secret : `${s.secret.slice(0, 6)}${"•".repeat(18)}`}</code>{" "}
                  <button type="button" class="link" onClick={() => setShown(!shown)}>
                    {shown ? "Hide" : "Reveal"}
                  </button>
                </span>,
              ],
              ["Created", formatTime(s.createdAt)],
              ["Previous secret valid until", s.previousSecretExpiresAt ? formatTime(s.previousSecretExpiresAt) : undefined],
            ]}
          />
          {confirming ? (
            <Notice tone="warn">
              A new secret signs from now on; the old one keeps signing alongside it for a while, so receivers can switch.{" "}
              <button
                type="button"
                class="danger"
                disabled={rotate.busy}
                onClick={() =>
                  void rotate.run(() => api<WebhookSecret>("POST", "/config/webhook-secret/rotate")).then(() => {
                    setConfirming(false);
                    setShown(true);
                  })
                }
              >
                Rotate now
              </button>{" "}
              <button type="button" class="secondary" onClick={() => setConfirming(false)}>
                Cancel
              </button>
            </Notice>
          ) : (
            <button type="button" class="secondary" onClick={() => setConfirming(true)}>
              Rotate secret
            </button>
          )}
          <ErrorBox error={rotate.error} />
        </>
      ) : secret.loading ? (
        <Loading />
      ) : null}
    </Section>
  );
}

function Deliveries({ route }: { route: Route }) {
  const api = useApi();
  const filters = { type: route.query.get("type") ?? "", resourceId: route.query.get("resourceId") ?? "" };
  const list = usePaged((cursor) => listEvents(api, compact(filters), cursor, PAGE_SIZE), [filters]);
  return (
    <Section title="Deliveries" actions={<button type="button" class="secondary" onClick={list.reload}>Refresh</button>}>
      <Form class="filters" onSubmit={(f) => navigate(`#/webhooks?${new URLSearchParams(compact(f) as Record<string, string>)}`)}>
        <Field label="Event type">
          <input name="type" defaultValue={filters.type} placeholder="Any" list="event-types" />
          <datalist id="event-types">
            {EVENT_TYPES.map((t) => (
              <option key={t} value={t} />
            ))}
          </datalist>
        </Field>
        <Field label="Resource id">
          <input name="resourceId" defaultValue={filters.resourceId} placeholder="Transaction:…" />
        </Field>
        <button type="submit" class="secondary">
          Filter
        </button>
      </Form>
      <ErrorBox error={list.error} />
      {list.loading && !list.data ? <Loading /> : null}
      {list.data ? (
        <>
          <EventRows events={list.data.data} empty="No event yet: events are recorded as things happen (a transfer, a verification…)." />
          <Pager list={list} />
        </>
      ) : null}
    </Section>
  );
}

function EventDetail({ id }: { id: string }) {
  const api = useApi();
  const event = useAsync(() => getEvent(api, id), [id]);
  const redeliver = useAction();
  const e = event.data;
  return (
    <>
      <p class="crumbs">
        <a href={href("webhooks")}>Webhooks</a> /
      </p>
      <ErrorBox error={event.error} />
      {!e ? (
        event.loading ? <Loading /> : null
      ) : (
        <>
          <div class="page-head">
            <h1>{e.type.replaceAll("_", " ")}</h1>
            <Status value={e.deliveryStatus} />
            <button type="button" disabled={redeliver.busy} onClick={() => void redeliver.run((key) => redeliverEvent(api, e.id, key)).then((r) => r !== undefined && event.reload())}>
              {redeliver.busy ? "Redelivering…" : "Redeliver"}
            </button>
            <button type="button" class="secondary" onClick={event.reload}>
              Refresh
            </button>
          </div>
          <ErrorBox error={redeliver.error} />
          {redeliver.result !== undefined ? <Notice tone="good">Queued again for the current endpoint: same id and body, fresh signatures.</Notice> : null}
          <Section title="Event">
            <Facts
              rows={[
                ["Id", <Id id={e.id} />],
                ["Resource", e.resourceId ? <Id id={e.resourceId} to={resourceLink(e.resourceId)} /> : undefined],
                ["Created", formatTime(e.createdAt)],
                ["Delivery", <Status value={e.deliveryStatus} />],
                ["Last error", e.lastError],
                ["Next attempt", e.nextAttemptAt ? formatTime(e.nextAttemptAt) : undefined],
                ["Redelivery asked", e.redeliveredAt ? formatTime(e.redeliveredAt) : undefined],
              ]}
            />
          </Section>
          <Section title="Attempts">
            <Table head={["When", "Endpoint", "HTTP status", "Latency", "Response"]} empty="No attempt yet.">
              {(e.attempts ?? []).map((a, i) => (
                <tr key={a.id ?? i}>
                  <td>{formatTime(a.attemptedAt)}</td>
                  <td class="wrap">{a.url ?? "—"}</td>
                  <td>{a.responseStatus ? <span class={`badge ${a.responseStatus < 300 ? "good" : "bad"}`}>{a.responseStatus}</span> : <span class="badge bad">no answer</span>}</td>
                  <td class="num">{a.latencyMs !== undefined ? `${a.latencyMs} ms` : "—"}</td>
                  <td class="wrap">
                    <code>{a.error || a.responseExcerpt || "—"}</code>
                  </td>
                </tr>
              ))}
            </Table>
          </Section>
          <Section title="Payload">
            <Json value={eventPayload(e)} />
          </Section>
        </>
      )}
    </>
  );
}

/** Where a resource of an event lives in the console, by its id's prefix. */
export function resourceLink(id: string): string | undefined {
  if (id.startsWith("Transaction:")) return href("transactions", id);
  if (id.startsWith("Customer:")) return href("customers", id);
  if (id.startsWith("Agent:")) return href("agents", id);
  return undefined;
}
