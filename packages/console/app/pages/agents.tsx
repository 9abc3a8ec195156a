import { useState } from "preact/hooks";
import type { Page } from "../api.js";
import { decimalsOf, formatMoney, formatTime, parseMajor, percentOf } from "../format.js";
import type { Agent, AgentAction, AgentPolicy, DeviceCode } from "../types.js";
import { ErrorBox, Facts, Field, Form, Id, Loading, Money, Notice, PAGE_SIZE, Pager, Section, Status, Table, compact, href, navigate, toNumber, useAction, useApi, useAsync, usePaged, type Route } from "../ui.js";

const PERMISSIONS = ["VIEW_TRANSACTIONS", "CREATE_QUOTES", "EXECUTE_QUOTES", "CREATE_TRANSFERS", "MANAGE_EXTERNAL_ACCOUNTS"];

export function AgentsPage({ route }: { route: Route }) {
  const id = route.path[1];
  return id ? <AgentDetail id={id} /> : <AgentsHome route={route} />;
}

function AgentsHome({ route }: { route: Route }) {
  const api = useApi();
  const filters = { customerId: route.query.get("customerId") ?? "", isPaused: route.query.get("isPaused") ?? "" };
  const list = usePaged((cursor) => api<Page<Agent>>("GET", "/agents", { query: { ...filters, limit: PAGE_SIZE, cursor } }), [filters]);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <div class="page-head">
        <h1>Agents</h1>
        <button type="button" onClick={() => setCreating(!creating)}>
          {creating ? "Close" : "New agent"}
        </button>
      </div>
      {creating ? <CreateAgent customerId={filters.customerId} onCreated={list.reload} /> : null}
      <Approvals onDecided={list.reload} />
      <Section title="All agents">
        <Form class="filters" onSubmit={(f) => navigate(`#/agents?${new URLSearchParams(compact(f) as Record<string, string>)}`)}>
          <Field label="Customer id">
            <input name="customerId" defaultValue={filters.customerId} placeholder="Customer:…" />
          </Field>
          <Field label="State">
            <select name="isPaused" defaultValue={filters.isPaused}>
              <option value="">Any</option>
              <option value="false">Active</option>
              <option value="true">Paused</option>
            </select>
          </Field>
          <button type="submit" class="secondary">
            Filter
          </button>
        </Form>
        <ErrorBox error={list.error} />
        {list.loading && !list.data ? <Loading /> : null}
        {list.data ? (
          <>
            <Table head={["Agent", "Customer", "State", "Mode", "Daily spend"]} empty="No agent yet.">
              {list.data.data.map((a) => (
                <tr key={a.id}>
                  <td>
                    <a href={href("agents", a.id)}>{a.name}</a>
                  </td>
                  <td>
                    <Id id={a.customerId} to={href("customers", a.customerId)} />
                  </td>
                  <td>
                    {a.isPaused ? <span class="badge bad">paused</span> : <span class="badge good">active</span>} {a.isConnected ? <span class="badge plain">connected</span> : <span class="badge wait">not connected</span>}
                  </td>
                  <td>{a.policy.defaultExecutionMode.replaceAll("_", " ")}</td>
                  <td class="num">{a.policy.spendingLimits ? `${formatMoney(a.usage.dailySpend, a.policy.spendingLimits.currency)} of ${formatMoney(a.policy.spendingLimits.dailyLimit, a.policy.spendingLimits.currency)}` : "—"}</td>
                </tr>
              ))}
            </Table>
            <Pager list={list} />
          </>
        ) : null}
      </Section>
    </>
  );
}

/** Major-unit text to minor units for a policy field; blank leaves it out. */
function minorOrUndefined(text: string | undefined, currency: string, label: string): number | undefined {
  if (!text || !text.trim()) return undefined;
  const parsed = parseMajor(text, decimalsOf(currency));
  if (!parsed.ok) throw new Error(`${label}: ${parsed.reason}`);
  return toNumber(parsed.minor);
}

function policyFromForm(f: Record<string, string>): Partial<AgentPolicy> {
  const currency = (f.currency || "USD").toUpperCase();
  const limits = compact({
    currency,
    perTransactionLimit: minorOrUndefined(f.perTransactionLimit, currency, "Per transaction"),
    dailyLimit: minorOrUndefined(f.dailyLimit, currency, "Daily limit"),
    monthlyLimit: minorOrUndefined(f.monthlyLimit, currency, "Monthly limit"),
    dailyTransactionLimit: f.dailyTransactionLimit ? Number(f.dailyTransactionLimit) : undefined,
  });
  const threshold = minorOrUndefined(f.threshold, currency, "Approval threshold");
  return compact({
    permissions: f.permissions ? f.permissions.split(",") : [],
    defaultExecutionMode: f.defaultExecutionMode,
    spendingLimits: Object.keys(limits).length > 1 ? (limits as AgentPolicy["spendingLimits"]) : undefined,
    approvalThresholds: threshold !== undefined ? { currency, amount: threshold } : undefined,
  });
}

function PolicyFields({ policy }: { policy?: AgentPolicy }) {
  const currency = policy?.spendingLimits?.currency ?? policy?.approvalThresholds?.currency ?? "USD";
  const major = (minor: number | undefined) => (minor ? formatMoney(minor, currency).replace(` ${currency}`, "").replaceAll(",", "") : "");
  return (
    <>
      <fieldset class="checks">
        <legend>Permissions</legend>
        {PERMISSIONS.map((p) => (
          <label key={p} class="check">
            <input type="checkbox" name="permissions" value={p} defaultChecked={policy ? policy.permissions.includes(p) : p !== "MANAGE_EXTERNAL_ACCOUNTS"} /> {p.replaceAll("_", " ").toLowerCase()}
          </label>
        ))}
      </fieldset>
      <div class="grid">
        <Field label="Execution">
          <select name="defaultExecutionMode" defaultValue={policy?.defaultExecutionMode ?? "AUTO"}>
            <option value="AUTO">Automatic (within limits)</option>
            <option value="APPROVAL_REQUIRED">Every action needs approval</option>
          </select>
        </Field>
        <Field label="Limit currency">
          <input name="currency" defaultValue={currency} maxLength={4} />
        </Field>
        <Field label="Per transaction">
          <input name="perTransactionLimit" inputMode="decimal" defaultValue={major(policy?.spendingLimits?.perTransactionLimit)} />
        </Field>
        <Field label="Daily limit">
          <input name="dailyLimit" inputMode="decimal" defaultValue={major(policy?.spendingLimits?.dailyLimit)} />
        </Field>
        <Field label="Monthly limit">
          <input name="monthlyLimit" inputMode="decimal" defaultValue={major(policy?.spendingLimits?.monthlyLimit)} />
        </Field>
        <Field label="Transactions per day">
          <input name="dailyTransactionLimit" inputMode="numeric" defaultValue={policy?.spendingLimits?.dailyTransactionLimit ? String(policy.spendingLimits.dailyTransactionLimit) : ""} />
        </Field>
        <Field label="Approve above" hint="Actions above this amount wait for you">
          <input name="threshold" inputMode="decimal" defaultValue={major(policy?.approvalThresholds?.amount)} />
        </Field>
      </div>
    </>
  );
}

function CreateAgent({ customerId, onCreated }: { customerId: string; onCreated: () => void }) {
  const api = useApi();
  const action = useAction<{ agent: Agent; deviceCode: DeviceCode }>();
  return (
    <Section title="New agent">
      {action.result ? (
        <Notice tone="good">
          Agent <a href={href("agents", action.result.agent.id)}>{action.result.agent.name}</a> created. Its software connects once with the device code{" "}
          <code class="big">{action.result.deviceCode.code}</code> (POST /agents/device-codes/{"{code}"}/redeem) before {formatTime(action.result.deviceCode.expiresAt)}.
        </Notice>
      ) : null}
      <Form
        onSubmit={(f) =>
          void action
            .run(async () => api<{ agent: Agent; deviceCode: DeviceCode }>("POST", "/agents", { body: { name: f.name, customerId: f.customerId, policy: policyFromForm(f) } }))
            .then((r) => r && onCreated())
        }
      >
        <div class="grid">
          <Field label="Name">
            <input name="name" required placeholder="Bookkeeper" />
          </Field>
          <Field label="Customer id" hint="The one customer it acts for">
            <input name="customerId" required placeholder="Customer:…" defaultValue={customerId} />
          </Field>
        </div>
        <PolicyFields />
        <ErrorBox error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create agent
        </button>
      </Form>
    </Section>
  );
}

function actionAmount(a: AgentAction) {
  if (a.quote) return <Money amount={a.quote.totalSendingAmount} currency={a.quote.sendingCurrency} />;
  if (a.transferDetails) return <Money amount={a.transferDetails.amount} currency={a.transferDetails.currency} />;
  return <span class="muted">—</span>;
}

function Approvals({ agentId, onDecided }: { agentId?: string; onDecided?: () => void }) {
  const api = useApi();
  const list = usePaged((cursor) => api<Page<AgentAction>>("GET", "/agents/approvals", { query: { agentId, limit: PAGE_SIZE, cursor } }), [agentId]);
  const decide = useAction<AgentAction>();
  const [rejecting, setRejecting] = useState<string | undefined>(undefined);
  const done = (r: AgentAction | undefined) => {
    if (!r) return;
    setRejecting(undefined);
    list.reload();
    onDecided?.();
  };
  return (
    <Section title="Approvals queue" actions={<button type="button" class="secondary" onClick={list.reload}>Refresh</button>}>
      <ErrorBox error={list.error} />
      <ErrorBox error={decide.error} />
      {decide.result ? (
        <Notice tone={decide.result.status === "REJECTED" ? "warn" : "good"}>
          Action {decide.result.id} is {decide.result.status.toLowerCase().replaceAll("_", " ")}
          {decide.result.transaction ? (
            <>
              : transaction <a href={href("transactions", decide.result.transaction.id)}>{decide.result.transaction.id}</a>
            </>
          ) : null}
          .
        </Notice>
      ) : null}
      {list.loading && !list.data ? <Loading /> : null}
      {list.data ? (
        <>
          <Table head={["Action", "Agent", "Customer", "Amount", "Asked", "Decision"]} empty="Nothing waits for approval.">
            {list.data.data.map((a) => (
              <tr key={a.id}>
                <td>
                  {a.type.replaceAll("_", " ")}
                  <div class="muted small">
                    <Id id={a.id} short />
                  </div>
                </td>
                <td>
                  <Id id={a.agentId} to={href("agents", a.agentId)} short />
                </td>
                <td>{a.platformCustomerId}</td>
                <td class="num">{actionAmount(a)}</td>
                <td>{formatTime(a.createdAt)}</td>
                <td>
                  {rejecting === a.id ? (
                    <Form
                      class="inline-form"
                      onSubmit={(f) =>
                        void decide.run(() => api<AgentAction>("POST", `/agents/${encodeURIComponent(a.agentId)}/actions/${encodeURIComponent(a.id)}/reject`, { body: compact({ reason: f.reason }) })).then(done)
                      }
                    >
                      <input name="reason" placeholder="Reason (optional)" aria-label="Reason" />
                      <button type="submit" class="danger" disabled={decide.busy}>
                        Reject
                      </button>
                      <button type="button" class="secondary" onClick={() => setRejecting(undefined)}>
                        Cancel
                      </button>
                    </Form>
                  ) : (
                    <div class="row nowrap">
                      <button
                        type="button"
                        disabled={decide.busy}
                        onClick={() => void decide.run(() => api<AgentAction>("POST", `/agents/${encodeURIComponent(a.agentId)}/actions/${encodeURIComponent(a.id)}/approve`)).then(done)}
                      >
                        Approve
                      </button>
                      <button type="button" class="secondary" onClick={() => setRejecting(a.id)}>
                        Reject…
                      </button>
                    </div>
                  )}
                </td>
              </tr>
            ))}
          </Table>
          <Pager list={list} />
        </>
      ) : null}
    </Section>
  );
}

function Usage({ label, used, limit, currency }: { label: string; used: number; limit?: number; currency?: string }) {
  const pct = percentOf(used, limit);
  const show = (n: number) => (currency ? formatMoney(n, currency) : String(n));
  return (
    <div class="usage">
      <div class="usage-label">
        <span>{label}</span>
        <span>{limit ? `${show(used)} of ${show(limit)}` : `${show(used)} (no limit)`}</span>
      </div>
      <div class="bar" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={pct ?? 0}>
        <span style={{ width: `${pct ?? 0}%` }} class={pct !== undefined && pct >= 90 ? "hot" : ""} />
      </div>
    </div>
  );
}

function AgentDetail({ id }: { id: string }) {
  const api = useApi();
  const agent = useAsync(() => api<Agent>("GET", `/agents/${encodeURIComponent(id)}`), [id]);
  const pause = useAction<Agent>();
  const policy = useAction<Agent>();
  const code = useAction<DeviceCode>();
  const [editing, setEditing] = useState(false);
  const a = pause.result?.id === id ? { ...agent.data!, ...pause.result } : agent.data;
  const limits = a?.policy.spendingLimits;
  return (
    <>
      <p class="crumbs">
        <a href={href("agents")}>Agents</a> /
      </p>
      <ErrorBox error={agent.error} />
      {!a ? (
        agent.loading ? <Loading /> : null
      ) : (
        <>
          <div class="page-head">
            <h1>{a.name}</h1>
            {a.isPaused ? <span class="badge bad">paused</span> : <span class="badge good">active</span>}
            <button type="button" class="secondary" disabled={pause.busy} onClick={() => void pause.run(() => api<Agent>("PATCH", `/agents/${encodeURIComponent(a.id)}`, { body: { isPaused: !a.isPaused } })).then(() => agent.reload())}>
              {a.isPaused ? "Resume" : "Pause"}
            </button>
            {!a.isConnected ? (
              <button type="button" class="secondary" disabled={code.busy} onClick={() => void code.run(() => api<DeviceCode>("POST", `/agents/${encodeURIComponent(a.id)}/device-codes`))}>
                New device code
              </button>
            ) : null}
          </div>
          <ErrorBox error={pause.error} />
          <ErrorBox error={code.error} />
          {code.result ? (
            <Notice tone="good">
              Device code <code class="big">{code.result.code}</code>, valid until {formatTime(code.result.expiresAt)}.
            </Notice>
          ) : null}
          <div class="two">
            <Section title="Agent">
              <Facts
                rows={[
                  ["Id", <Id id={a.id} />],
                  ["Customer", <Id id={a.customerId} to={href("customers", a.customerId)} />],
                  ["Connected", a.isConnected ? "yes" : "no (its device code is not redeemed yet)"],
                  ["Created", formatTime(a.createdAt)],
                ]}
              />
            </Section>
            <Section title="Usage against limits">
              <Usage label="Spent today" used={a.usage.dailySpend} limit={limits?.dailyLimit} currency={limits?.currency ?? "USD"} />
              <Usage label="Spent this month" used={a.usage.monthlySpend} limit={limits?.monthlyLimit} currency={limits?.currency ?? "USD"} />
              <Usage label="Transactions today" used={a.usage.dailyTransactionCount} limit={limits?.dailyTransactionLimit} />
            </Section>
          </div>
          <Section title="Policy" actions={<button type="button" class="secondary" onClick={() => setEditing(!editing)}>{editing ? "Close" : "Edit"}</button>}>
            {editing ? (
              <Form
                onSubmit={(f) =>
                  void policy
                    .run(() => {
                      const p = policyFromForm(f);
                      return api<Agent>("PATCH", `/agents/${encodeURIComponent(a.id)}/policy`, { body: { ...p, approvalThresholds: p.approvalThresholds ?? null } });
                    })
                    .then((r) => {
                      if (r) {
                        setEditing(false);
                        agent.reload();
                      }
                    })
                }
              >
                <PolicyFields policy={a.policy} />
                <ErrorBox error={policy.error} />
                <button type="submit" disabled={policy.busy}>
                  Save policy
                </button>
              </Form>
            ) : (
              <Facts
                rows={[
                  ["Permissions", a.policy.permissions.length ? a.policy.permissions.map((p) => p.replaceAll("_", " ").toLowerCase()).join(", ") : "none"],
                  ["Execution", a.policy.defaultExecutionMode === "AUTO" ? "automatic within limits" : "every action needs approval"],
                  ["Per transaction", limits?.perTransactionLimit ? formatMoney(limits.perTransactionLimit, limits.currency) : undefined],
                  ["Daily limit", limits?.dailyLimit ? formatMoney(limits.dailyLimit, limits.currency) : undefined],
                  ["Monthly limit", limits?.monthlyLimit ? formatMoney(limits.monthlyLimit, limits.currency) : undefined],
                  ["Transactions per day", limits?.dailyTransactionLimit ? String(limits.dailyTransactionLimit) : undefined],
                  ["Approval above", a.policy.approvalThresholds ? formatMoney(a.policy.approvalThresholds.amount, a.policy.approvalThresholds.currency) : undefined],
                  ["Allowed accounts", a.policy.accountRestrictions?.allowedAccountIds?.join(", ") ?? "any of the customer's"],
                ]}
              />
            )}
          </Section>
          <Approvals agentId={a.id} onDecided={agent.reload} />
        </>
      )}
    </>
  );
}
