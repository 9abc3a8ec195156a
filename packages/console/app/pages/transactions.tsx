import { useEffect } from "preact/hooks";
import type { Page } from "../api.js";
import { eventData, eventsFor, type WebhookEvent } from "../events.js";
import { formatTime } from "../format.js";
import type { Transaction } from "../types.js";
import { ErrorBox, Facts, Field, Form, Id, Loading, Money, Notice, PAGE_SIZE, Pager, Section, Status, Table, compact, href, navigate, useAction, useApi, useAsync, usePaged, type Route } from "../ui.js";
import { TransactionRows } from "./customers.js";

const STATUSES = ["CREATED", "PENDING_AUTHORIZATION", "PENDING", "PROCESSING", "COMPLETED", "REJECTED", "FAILED", "REFUNDED", "EXPIRED"];

export function TransactionsPage({ route }: { route: Route }) {
  const id = route.path[1];
  return id ? <TransactionDetail id={id} /> : <TransactionList route={route} />;
}

function TransactionList({ route }: { route: Route }) {
  const api = useApi();
  const q = route.query;
  const filters = {
    customerId: q.get("customerId") ?? "",
    platformCustomerId: q.get("platformCustomerId") ?? "",
    status: q.get("status") ?? "",
    type: q.get("type") ?? "",
    reference: q.get("reference") ?? "",
    startDate: q.get("startDate") ?? "",
    endDate: q.get("endDate") ?? "",
    sortOrder: q.get("sortOrder") ?? "desc",
  };
  const list = usePaged(
    (cursor) =>
      api<Page<Transaction>>("GET", "/transactions", {
        query: {
          ...filters,
          // Dates are picked as days; the API takes instants.
          startDate: filters.startDate ? new Date(`${filters.startDate}T00:00:00`).toISOString() : undefined,
          endDate: filters.endDate ? new Date(`${filters.endDate}T23:59:59.999`).toISOString() : undefined,
          limit: PAGE_SIZE,
          cursor,
        },
      }),
    [filters],
  );
  return (
    <>
      <div class="page-head">
        <h1>Transactions</h1>
      </div>
      <Section title="Filters">
        <Form
          class="filters"
          onSubmit={(f) => {
            // A Transaction id goes straight to that transaction.
            const typed = (f.reference ?? "").trim();
            if (typed.startsWith("Transaction:")) return navigate(href("transactions", typed));
            navigate(`#/transactions?${new URLSearchParams(compact(f) as Record<string, string>)}`);
          }}
        >
          <Field label="Customer id">
            <input name="customerId" defaultValue={filters.customerId} placeholder="Customer:…" />
          </Field>
          <Field label="Platform customer id">
            <input name="platformCustomerId" defaultValue={filters.platformCustomerId} />
          </Field>
          <Field label="Status">
            <select name="status" defaultValue={filters.status}>
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          </Field>
          <Field label="Type">
            <select name="type" defaultValue={filters.type}>
              <option value="">Any</option>
              <option>INCOMING</option>
              <option>OUTGOING</option>
            </select>
          </Field>
          <Field label="Reference (or Transaction id)">
            <input name="reference" defaultValue={filters.reference} />
          </Field>
          <Field label="From">
            <input name="startDate" type="date" defaultValue={filters.startDate} />
          </Field>
          <Field label="To">
            <input name="endDate" type="date" defaultValue={filters.endDate} />
          </Field>
          <Field label="Order">
            <select name="sortOrder" defaultValue={filters.sortOrder}>
              <option value="desc">Newest first</option>
              <option value="asc">Oldest first</option>
            </select>
          </Field>
          <button type="submit" class="secondary">
            Apply
          </button>
        </Form>
        <ErrorBox error={list.error} />
        {list.loading && !list.data ? <Loading /> : null}
        {list.data ? (
          <>
            <TransactionRows rows={list.data.data} />
            <Pager list={list} />
          </>
        ) : null}
      </Section>
    </>
  );
}

/** One line of a transaction's history: its own timestamps, then each event about it. */
interface Moment {
  at: string;
  what: string;
  status?: string;
  event?: WebhookEvent;
}

function timeline(t: Transaction, events: WebhookEvent[]): Moment[] {
  const moments: Moment[] = [{ at: t.createdAt, what: "Created" }];
  for (const e of events) {
    const data = eventData(e);
    const status = typeof data?.status === "string" ? data.status : undefined;
    moments.push({ at: e.createdAt, what: e.type, status, event: e });
  }
  if (t.settledAt) moments.push({ at: t.settledAt, what: "Settled", status: t.status });
  if (t.refund?.initiatedAt) moments.push({ at: t.refund.initiatedAt, what: "Refund started", status: t.refund.status });
  if (t.refund?.settledAt) moments.push({ at: t.refund.settledAt, what: "Refund settled", status: t.refund.status });
  return moments.sort((a, b) => a.at.localeCompare(b.at));
}

function TransactionDetail({ id }: { id: string }) {
  const api = useApi();
  const tx = useAsync(() => api<Transaction>("GET", `/transactions/${encodeURIComponent(id)}`), [id]);
  const events = useAsync(() => eventsFor(api, id), [id]);
  const decide = useAction<Transaction>();
  const t = tx.data;
  const reload = () => {
    tx.reload();
    events.reload();
  };
  // While the transaction is on its way, follow it (and the events it causes) every 2 s.
  const moving = t !== undefined && ["CREATED", "PENDING_AUTHORIZATION", "PENDING", "PROCESSING"].includes(t.status);
  useEffect(() => {
    if (!moving) return;
    const timer = setTimeout(reload, 2000);
    return () => clearTimeout(timer);
  }, [moving, t]);
  // The events of the last step are recorded just after it: read them once more.
  useEffect(() => {
    if (moving || !t) return;
    const timer = setTimeout(events.reload, 1500);
    return () => clearTimeout(timer);
  }, [moving, t?.status]);
  return (
    <>
      <p class="crumbs">
        <a href={href("transactions")}>Transactions</a> /
      </p>
      <ErrorBox error={tx.error} />
      {!t ? (
        tx.loading ? <Loading /> : null
      ) : (
        <>
          <div class="page-head">
            <h1>
              {t.type === "INCOMING" ? "Incoming" : "Outgoing"} <Money amount={(t.sentAmount ?? t.receivedAmount).amount} currency={(t.sentAmount ?? t.receivedAmount).currency} />
            </h1>
            <Status value={t.status} />
            <button type="button" class="secondary" onClick={reload}>
              Refresh
            </button>
          </div>
          {t.type === "INCOMING" && t.status === "PENDING" ? (
            <Notice tone="warn">
              This incoming payment waits for your approval.{" "}
              <button type="button" disabled={decide.busy} onClick={() => void decide.run(() => api<Transaction>("POST", `/transactions/${encodeURIComponent(t.id)}/approve`, { body: {} })).then((r) => r && reload())}>
                Approve
              </button>{" "}
              <button type="button" class="danger" disabled={decide.busy} onClick={() => void decide.run(() => api<Transaction>("POST", `/transactions/${encodeURIComponent(t.id)}/reject`, { body: {} })).then((r) => r && reload())}>
                Reject
              </button>
            </Notice>
          ) : null}
          <ErrorBox error={decide.error} />
          <Section title="Details">
            <Facts
              rows={[
                ["Id", <Id id={t.id} />],
                ["Type / direction", `${t.type} · ${t.direction}`],
                ["Customer", t.customerId ? <Id id={t.customerId} to={href("customers", t.customerId)} /> : undefined],
                ["Platform customer id", t.platformCustomerId],
                ["From", t.source.accountId ?? t.source.umaAddress ?? t.source.sourceType],
                ["To", [t.destination.accountId ?? t.destination.umaAddress ?? t.destination.destinationType, t.destination.paymentRail].filter(Boolean).join(" · ")],
                ["Sent", t.sentAmount ? <Money amount={t.sentAmount.amount} currency={t.sentAmount.currency} /> : undefined],
                ["Received", <Money amount={t.receivedAmount.amount} currency={t.receivedAmount.currency} />],
                ["Fees", t.fees !== undefined ? <Money amount={t.fees} currency={t.sentAmount?.currency ?? t.receivedAmount.currency} /> : undefined],
                ["Exchange rate", t.exchangeRate !== undefined ? String(t.exchangeRate) : undefined],
                ["Quote", t.quoteId],
                ["Agent", t.agentId ? <Id id={t.agentId} to={href("agents", t.agentId)} /> : undefined],
                ["Description", t.description],
                ["Reference", t.reconciliationInstructions?.reference],
                ["Failure", t.failureReason ? `${t.failureReason}${t.failureDetail ? ` — ${t.failureDetail}` : ""}` : undefined],
                ["Created", formatTime(t.createdAt)],
                ["Updated", formatTime(t.updatedAt)],
                ["Settled", t.settledAt ? formatTime(t.settledAt) : undefined],
              ]}
            />
          </Section>
          {t.rateDetails ? (
            <Section title="Rate details">
              <Facts
                rows={[
                  ["Service multiplier", String(t.rateDetails.serviceApiMultiplier)],
                  ["Fixed fee", <Money amount={t.rateDetails.serviceApiFixedFee} currency={t.sentAmount?.currency ?? t.receivedAmount.currency} />],
                  ["Variable fee rate", `${(t.rateDetails.serviceApiVariableFeeRate * 100).toFixed(3)} %`],
                  ["Variable fee", <Money amount={t.rateDetails.serviceApiVariableFeeAmount} currency={t.sentAmount?.currency ?? t.receivedAmount.currency} />],
                ]}
              />
            </Section>
          ) : null}
          <Section title="Timeline">
            <ErrorBox error={events.error} />
            <ol class="timeline">
              {timeline(t, events.data ?? []).map((m, i) => (
                <li key={i}>
                  <time>{formatTime(m.at)}</time>
                  <span class="what">{m.what.replaceAll("_", " ")}</span>
                  {m.status ? <Status value={m.status} /> : null}
                </li>
              ))}
            </ol>
          </Section>
          <Section title="Webhooks it caused">
            <EventRows events={events.data ?? []} empty={events.loading ? "Loading…" : "No webhook about this transaction yet."} />
          </Section>
        </>
      )}
    </>
  );
}

export function EventRows({ events, empty }: { events: WebhookEvent[]; empty?: string }) {
  return (
    <Table head={["Event", "Type", "Created", "Delivery", "Attempts"]} empty={empty ?? "No event yet."}>
      {events.map((e) => (
        <tr key={e.id}>
          <td>
            <Id id={e.id} to={href("webhooks", e.id)} />
          </td>
          <td>{e.type}</td>
          <td>{formatTime(e.createdAt)}</td>
          <td>
            <Status value={e.deliveryStatus} />
          </td>
          <td class="num">{e.attemptCount ?? e.attempts?.length ?? "—"}</td>
        </tr>
      ))}
    </Table>
  );
}
