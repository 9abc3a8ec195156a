import { useState } from "preact/hooks";
import type { Page } from "../api.js";
import { decimalsOf, formatTime, parseMajor } from "../format.js";
import type { Customer, InternalAccount, Transaction } from "../types.js";
import { ErrorBox, Field, Form, Loading, Notice, Section, href, toNumber, useAction, useApi, useAsync } from "../ui.js";
import { FundAccount } from "./customers.js";
import { TestResult, type TestWebhookResult } from "./webhooks.js";

interface SandboxClock {
  now: string;
  offsetSeconds: number;
  fired: number;
}

export function SandboxPage() {
  const api = useApi();
  const accounts = useAsync(async () => {
    const [customers, platform] = await Promise.all([
      api<Page<InternalAccount>>("GET", "/customers/internal-accounts", { query: { limit: 100 } }),
      api<Page<InternalAccount>>("GET", "/platform/internal-accounts"),
    ]);
    return [...customers.data, ...platform.data];
  }, []);
  const clock = useAction<SandboxClock>();
  const test = useAction<TestWebhookResult>();
  const sendTest = () => api<TestWebhookResult>("POST", "/sandbox/webhooks/test");
  return (
    <>
      <div class="page-head">
        <h1>Sandbox</h1>
      </div>
      <p class="muted">Drive the simulated rails of this sandbox platform. Production platforms get 403 on every one of these.</p>
      <div class="two">
        <Section title="Fund an account">
          <ErrorBox error={accounts.error} />
          {accounts.data ? (
            accounts.data.length ? (
              <FundAccount accounts={accounts.data} onFunded={accounts.reload} />
            ) : (
              <p class="muted">No internal account yet: create a customer first.</p>
            )
          ) : accounts.loading ? (
            <Loading />
          ) : null}
        </Section>
        <Section title="Advance the clock">
          <p class="muted small">Moves this platform's sandbox clock forward: pending transfers (account numbers ending 005 wait ~30 s), quotes and approvals fall due at once.</p>
          <Form
            class="inline-form"
            onSubmit={(f) => {
              const seconds = Number(f.seconds);
              void clock.run(() => api<SandboxClock>("POST", "/sandbox/clock/advance", { body: { seconds } }));
            }}
          >
            <Field label="Seconds">
              <input name="seconds" type="number" min={1} step={1} defaultValue="31" required />
            </Field>
            <button type="submit" disabled={clock.busy}>
              Advance
            </button>
          </Form>
          <ErrorBox error={clock.error} />
          {clock.result ? (
            <Notice tone="good">
              Sandbox time is now {formatTime(clock.result.now)} ({clock.result.offsetSeconds} s ahead); {clock.result.fired} scheduled {clock.result.fired === 1 ? "step" : "steps"} ran.
            </Notice>
          ) : null}
        </Section>
        <IncomingUma />
        <Section title="Send a TEST webhook">
          <p class="muted small">
            Posts a signed TEST event to the endpoint set on the <a href={href("webhooks")}>Webhooks</a> page and shows the answer.
          </p>
          <button type="button" disabled={test.busy} onClick={() => void test.run(sendTest)}>
            Send TEST webhook
          </button>
          <ErrorBox error={test.error} />
          {test.result ? <TestResult result={test.result} /> : null}
        </Section>
      </div>
    </>
  );
}

function IncomingUma() {
  const api = useApi();
  const customers = useAsync(() => api<Page<Customer>>("GET", "/customers", { query: { limit: 100 } }), []);
  const action = useAction<Transaction>();
  const [amountError, setAmountError] = useState<string | undefined>(undefined);
  const withUma = (customers.data?.data ?? []).filter((c) => c.umaAddress);
  return (
    <Section title="Simulate an incoming UMA payment">
      <ErrorBox error={customers.error} />
      <Form
        onSubmit={(f) => {
          const currency = (f.currency || "USD").toUpperCase();
          const parsed = parseMajor(f.amount ?? "", decimalsOf(currency));
          if (!parsed.ok) return setAmountError(parsed.reason);
          setAmountError(undefined);
          void action.run(() =>
            api<Transaction>("POST", "/sandbox/uma/receive", {
              body: { senderUmaAddress: f.sender, receiverUmaAddress: f.receiver, receivingCurrencyCode: currency, receivingCurrencyAmount: toNumber(parsed.minor) },
            }),
          );
        }}
      >
        <div class="grid">
          <Field label="From (sender's UMA address)">
            <input name="sender" required defaultValue="$alice@sender.example" />
          </Field>
          <Field label="To (a customer's UMA address)">
            {withUma.length ? (
              <select name="receiver">
                {withUma.map((c) => (
                  <option key={c.id} value={c.umaAddress}>
                    {c.umaAddress}
                  </option>
                ))}
              </select>
            ) : (
              <input name="receiver" required placeholder="$user@your-uma-domain" />
            )}
          </Field>
          <Field label="Currency">
            <input name="currency" defaultValue="USD" maxLength={4} />
          </Field>
          <Field label="Amount">
            <input name="amount" inputMode="decimal" required placeholder="10.00" />
          </Field>
        </div>
        {amountError ? <p class="error">{amountError}</p> : null}
        <ErrorBox error={action.error} />
        {action.result ? (
          <Notice tone="good">
            Incoming payment <a href={href("transactions", action.result.id)}>{action.result.id}</a> is {action.result.status.toLowerCase()}.
          </Notice>
        ) : null}
        <button type="submit" disabled={action.busy}>
          Receive payment
        </button>
      </Form>
    </Section>
  );
}
