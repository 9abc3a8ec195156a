import { useEffect, useState } from "preact/hooks";
import type { Page } from "../api.js";
import { decimalsOf, formatTime, parseMajor } from "../format.js";
import type { BeneficialOwner, Customer, ExternalAccount, InternalAccount, Transaction, Verification } from "../types.js";
import {
  ErrorBox,
  Facts,
  Field,
  Form,
  Id,
  Loading,
  Money,
  Notice,
  PAGE_SIZE,
  Pager,
  Section,
  Status,
  Table,
  compact,
  href,
  navigate,
  toNumber,
  useAction,
  useApi,
  useAsync,
  usePaged,
  type Route,
} from "../ui.js";

export function customerName(c: Customer): string {
  return c.customerType === "BUSINESS" ? (c.businessInfo?.legalName ?? c.platformCustomerId) : (c.fullName ?? c.platformCustomerId);
}

export function CustomersPage({ route }: { route: Route }) {
  const id = route.path[1];
  return id ? <CustomerDetail id={id} /> : <CustomerList route={route} />;
}

function CustomerList({ route }: { route: Route }) {
  const api = useApi();
  const q = route.query;
  const filters = {
    platformCustomerId: q.get("platformCustomerId") ?? "",
    customerType: q.get("customerType") ?? "",
    region: q.get("region") ?? "",
    currency: q.get("currency") ?? "",
    isIncludingDeleted: q.get("isIncludingDeleted") ?? "",
  };
  const list = usePaged((cursor) => api<Page<Customer>>("GET", "/customers", { query: { ...filters, limit: PAGE_SIZE, cursor } }), [filters]);
  const [creating, setCreating] = useState(false);
  return (
    <>
      <div class="page-head">
        <h1>Customers</h1>
        <button type="button" onClick={() => setCreating(!creating)}>
          {creating ? "Close" : "New customer"}
        </button>
      </div>
      {creating ? <CreateCustomer onCreated={(c) => navigate(href("customers", c.id))} /> : null}
      <Section title="Find customers">
        <Form
          class="filters"
          onSubmit={(f) => {
            // A Customer id goes straight to that customer.
            const typed = (f.platformCustomerId ?? "").trim();
            if (typed.startsWith("Customer:")) return navigate(href("customers", typed));
            const params = new URLSearchParams(compact(f) as Record<string, string>);
            navigate(`#/customers?${params}`);
          }}
        >
          <Field label="Platform customer id (or Customer id)">
            <input name="platformCustomerId" defaultValue={filters.platformCustomerId} placeholder="user-1" />
          </Field>
          <Field label="Type">
            <select name="customerType" defaultValue={filters.customerType}>
              <option value="">Any</option>
              <option>INDIVIDUAL</option>
              <option>BUSINESS</option>
            </select>
          </Field>
          <Field label="Region">
            <input name="region" defaultValue={filters.region} placeholder="US" maxLength={2} />
          </Field>
          <Field label="Currency">
            <input name="currency" defaultValue={filters.currency} placeholder="USD" />
          </Field>
          <label class="check">
            <input type="checkbox" name="isIncludingDeleted" value="true" defaultChecked={filters.isIncludingDeleted === "true"} /> Include deleted
          </label>
          <button type="submit" class="secondary">
            Search
          </button>
        </Form>
        <ErrorBox error={list.error} />
        {list.loading && !list.data ? <Loading /> : null}
        {list.data ? (
          <>
            <Table head={["Name", "Platform id", "Type", "KYC / KYB", "Region", "Created"]} empty="No customer matches.">
              {list.data.data.map((c) => (
                <tr key={c.id}>
                  <td>
                    <a href={href("customers", c.id)}>{customerName(c)}</a>
                    {c.isDeleted ? <span class="badge bad">deleted</span> : null}
                  </td>
                  <td>{c.platformCustomerId}</td>
                  <td>{c.customerType}</td>
                  <td>
                    <Status value={c.customerType === "BUSINESS" ? c.kybStatus : c.kycStatus} />
                  </td>
                  <td>{c.region ?? "—"}</td>
                  <td>{formatTime(c.createdAt)}</td>
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

function CreateCustomer({ onCreated }: { onCreated: (c: Customer) => void }) {
  const api = useApi();
  const action = useAction<Customer>();
  const [type, setType] = useState<"INDIVIDUAL" | "BUSINESS">("INDIVIDUAL");
  return (
    <Section title="New customer">
      <p class="muted small">Sandbox: a name ending in 001 verifies as PENDING, 002 as REJECTED; any other is APPROVED.</p>
      <Form
        onSubmit={(f) =>
          void action
            .run(() => {
              const address = compact({ line1: f.line1, city: f.city, postalCode: f.postalCode, country: f.country });
              const body =
                type === "INDIVIDUAL"
                  ? compact({ customerType: type, platformCustomerId: f.platformCustomerId, fullName: f.fullName, birthDate: f.birthDate, nationality: f.nationality, email: f.email, region: f.region, address: address.line1 ? address : undefined })
                  : compact({
                      customerType: type,
                      platformCustomerId: f.platformCustomerId,
                      email: f.email,
                      region: f.region,
                      address: address.line1 ? address : undefined,
                      businessInfo: compact({ legalName: f.legalName, registrationNumber: f.registrationNumber, taxId: f.taxId, countryOfIncorporation: f.countryOfIncorporation }),
                    });
              return api<Customer>("POST", "/customers", { body });
            })
            .then((c) => c && onCreated(c))
        }
      >
        <div class="grid">
          <Field label="Type">
            <select name="customerType" value={type} onChange={(e) => setType(e.currentTarget.value as "INDIVIDUAL" | "BUSINESS")}>
              <option>INDIVIDUAL</option>
              <option>BUSINESS</option>
            </select>
          </Field>
          <Field label="Platform customer id" hint="Your own id for this customer.">
            <input name="platformCustomerId" required />
          </Field>
          {type === "INDIVIDUAL" ? (
            <>
              <Field label="Full name">
                <input name="fullName" />
              </Field>
              <Field label="Birth date">
                <input name="birthDate" type="date" />
              </Field>
              <Field label="Nationality" hint="Two letters, e.g. GB">
                <input name="nationality" maxLength={2} />
              </Field>
            </>
          ) : (
            <>
              <Field label="Legal name">
                <input name="legalName" required />
              </Field>
              <Field label="Registration number">
                <input name="registrationNumber" />
              </Field>
              <Field label="Tax id">
                <input name="taxId" />
              </Field>
              <Field label="Country of incorporation">
                <input name="countryOfIncorporation" maxLength={2} />
              </Field>
            </>
          )}
          <Field label="Email">
            <input name="email" type="email" />
          </Field>
          <Field label="Region">
            <input name="region" maxLength={2} defaultValue="US" />
          </Field>
          <Field label="Address line 1">
            <input name="line1" />
          </Field>
          <Field label="City">
            <input name="city" />
          </Field>
          <Field label="Postal code">
            <input name="postalCode" />
          </Field>
          <Field label="Country">
            <input name="country" maxLength={2} defaultValue="US" />
          </Field>
        </div>
        <ErrorBox error={action.error} />
        <button type="submit" disabled={action.busy}>
          Create customer
        </button>
      </Form>
    </Section>
  );
}

function CustomerDetail({ id }: { id: string }) {
  const api = useApi();
  const customer = useAsync(() => api<Customer>("GET", `/customers/${encodeURIComponent(id)}`), [id]);
  const verifications = useAsync(() => api<Page<Verification>>("GET", "/verifications", { query: { customerId: id, limit: 5 } }), [id]);
  const internal = useAsync(() => api<Page<InternalAccount>>("GET", "/customers/internal-accounts", { query: { customerId: id, limit: 100 } }), [id]);
  const external = useAsync(() => api<Page<ExternalAccount>>("GET", "/customers/external-accounts", { query: { customerId: id, limit: 100 } }), [id]);
  const transactions = useAsync(() => api<Page<Transaction>>("GET", "/transactions", { query: { customerId: id, limit: 5 } }), [id]);
  const verify = useAction<Verification>();
  const kycLink = useAction<{ kycUrl: string; expiresAt: string }>();
  const c = customer.data;
  // The ledger opens a new customer's accounts a moment after the customer exists: look again.
  const noAccountYet = internal.data !== undefined && internal.data.data.length === 0;
  useEffect(() => {
    if (!noAccountYet) return;
    const timer = setTimeout(internal.reload, 1000);
    return () => clearTimeout(timer);
  }, [noAccountYet, internal.data]);
  const refreshMoney = () => {
    internal.reload();
    transactions.reload();
  };

  return (
    <>
      <p class="crumbs">
        <a href={href("customers")}>Customers</a> /
      </p>
      <ErrorBox error={customer.error} />
      {!c ? (
        customer.loading ? <Loading /> : null
      ) : (
        <>
          <div class="page-head">
            <h1>{customerName(c)}</h1>
            <button
              type="button"
              disabled={verify.busy}
              onClick={() =>
                void verify
                  .run(() => api<Verification>("POST", "/verifications", { body: { customerId: c.id } }))
                  .then((v) => {
                    if (v) {
                      customer.reload();
                      verifications.reload();
                    }
                  })
              }
            >
              {verify.busy ? "Verifying…" : "Verify"}
            </button>
            <button
              type="button"
              class="secondary"
              disabled={kycLink.busy}
              title="A single-use hosted page where the customer completes verification"
              onClick={() => void kycLink.run(() => api<{ kycUrl: string; expiresAt: string }>("POST", `/customers/${encodeURIComponent(c.id)}/kyc-link`, { body: {} }))}
            >
              Hosted KYC link
            </button>
          </div>
          <ErrorBox error={verify.error} />
          <ErrorBox error={kycLink.error} />
          {kycLink.result ? (
            <Notice>
              Hand this single-use page to the customer (valid until {formatTime(kycLink.result.expiresAt)}):{" "}
              <a href={kycLink.result.kycUrl} target="_blank" rel="noopener noreferrer">
                {kycLink.result.kycUrl}
              </a>
            </Notice>
          ) : null}
          {verify.result ? (
            <Notice tone={verify.result.verificationStatus === "APPROVED" ? "good" : "warn"}>
              Verification {verify.result.verificationStatus.replaceAll("_", " ").toLowerCase()}
              {verify.result.errors.length ? `: ${verify.result.errors.map((e) => `${e.field} (${e.reason})`).join("; ")}` : "."}
            </Notice>
          ) : null}
          <Section title="Profile">
            <Facts
              rows={[
                ["Id", <Id id={c.id} />],
                ["Platform id", c.platformCustomerId],
                ["Type", c.customerType],
                [c.customerType === "BUSINESS" ? "KYB status" : "KYC status", <Status value={c.customerType === "BUSINESS" ? c.kybStatus : c.kycStatus} />],
                ["Email", c.email],
                ["Region", c.region],
                ["UMA address", c.umaAddress],
                ...(c.customerType === "INDIVIDUAL"
                  ? ([
                      ["Birth date", c.birthDate],
                      ["Nationality", c.nationality],
                    ] as [string, string | undefined][])
                  : ([
                      ["Registration number", c.businessInfo?.registrationNumber],
                      ["Tax id", c.businessInfo?.taxId],
                    ] as [string, string | undefined][])),
                ["Address", c.address ? [c.address.line1, c.address.city, c.address.postalCode, c.address.country].filter(Boolean).join(", ") : undefined],
                ["Created", formatTime(c.createdAt)],
              ]}
            />
          </Section>
          <Section title="Verifications">
            <ErrorBox error={verifications.error} />
            <Table head={["When", "Status", "What is missing"]} empty="Not verified yet: press Verify.">
              {(verifications.data?.data ?? []).map((v) => (
                <tr key={v.id}>
                  <td>{formatTime(v.createdAt)}</td>
                  <td>
                    <Status value={v.verificationStatus} />
                  </td>
                  <td>{v.errors.length ? v.errors.map((e) => `${e.field}: ${e.reason}`).join("; ") : "—"}</td>
                </tr>
              ))}
            </Table>
          </Section>
          {c.customerType === "BUSINESS" ? <BeneficialOwners customerId={c.id} /> : null}
          <Section title="Internal accounts">
            <ErrorBox error={internal.error} />
            <Table head={["Account", "Type", "Balance"]} empty="No account yet (they open a moment after the customer is created).">
              {(internal.data?.data ?? []).map((a) => (
                <tr key={a.id}>
                  <td>
                    <Id id={a.id} />
                  </td>
                  <td>{a.type}</td>
                  <td class="num">
                    <Money amount={a.balance.amount} currency={a.balance.currency} />
                  </td>
                </tr>
              ))}
            </Table>
            {internal.data?.data.length ? <FundAccount accounts={internal.data.data} onFunded={refreshMoney} /> : null}
          </Section>
          <Section title="External accounts">
            <ErrorBox error={external.error} />
            <Table head={["Account", "Currency", "Details", "Status"]} empty="No external account yet.">
              {(external.data?.data ?? []).map((a) => (
                <tr key={a.id}>
                  <td>
                    <Id id={a.id} />
                  </td>
                  <td>{a.currency}</td>
                  <td>{describeExternal(a)}</td>
                  <td>
                    <Status value={a.status} />
                  </td>
                </tr>
              ))}
            </Table>
            <AddBankAccount customerId={c.id} onAdded={external.reload} />
          </Section>
          {internal.data?.data.length && external.data?.data.length ? (
            <div class="two">
              <TransferOut internal={internal.data.data} external={external.data.data} onSent={refreshMoney} />
              <QuotePayment internal={internal.data.data} external={external.data.data} onSent={refreshMoney} />
            </div>
          ) : null}
          <Section
            title="Recent transactions"
            actions={
              <span class="row">
                <a href={`#/agents?customerId=${encodeURIComponent(c.id)}`}>Its agents →</a>
                <a href={`#/transactions?customerId=${encodeURIComponent(c.id)}`}>All its transactions →</a>
              </span>
            }
          >
            <ErrorBox error={transactions.error} />
            <TransactionRows rows={transactions.data?.data ?? []} />
          </Section>
        </>
      )}
    </>
  );
}

export function describeExternal(a: ExternalAccount): string {
  const info = a.accountInfo;
  const number = info.accountNumber ?? info.iban ?? info.address ?? "";
  const tail = number ? `…${String(number).slice(-4)}` : "";
  return [info.accountType.replaceAll("_", " "), info.bankName, tail].filter(Boolean).join(" · ");
}

export function TransactionRows({ rows }: { rows: Transaction[] }) {
  return (
    <Table head={["Transaction", "Type", "Status", "Amount", "Created"]} empty="No transaction yet.">
      {rows.map((t) => (
        <tr key={t.id}>
          <td>
            <Id id={t.id} to={href("transactions", t.id)} />
          </td>
          <td>{t.type}</td>
          <td>
            <Status value={t.status} />
          </td>
          <td class="num">
            <Money amount={(t.sentAmount ?? t.receivedAmount).amount} currency={(t.sentAmount ?? t.receivedAmount).currency} />
          </td>
          <td>{formatTime(t.createdAt)}</td>
        </tr>
      ))}
    </Table>
  );
}

/** The account a form starts on: the first fiat account (wallets hold crypto), else the first. */
function preferredAccount(accounts: InternalAccount[]): InternalAccount | undefined {
  return accounts.find((a) => a.type === "INTERNAL_FIAT") ?? accounts[0];
}

/** Sandbox funding of one of the listed accounts, in major units. */
export function FundAccount({ accounts, onFunded }: { accounts: InternalAccount[]; onFunded: () => void }) {
  const api = useApi();
  const action = useAction<InternalAccount>();
  const [accountId, setAccountId] = useState(preferredAccount(accounts)?.id ?? "");
  const [amountError, setAmountError] = useState<string | undefined>(undefined);
  const account = accounts.find((a) => a.id === accountId) ?? accounts[0];
  const currency = account?.balance.currency;
  return (
    <Form
      class="inline-form"
      onSubmit={(f) => {
        if (!account || !currency) return;
        const parsed = parseMajor(f.amount ?? "", currency.decimals);
        if (!parsed.ok) return setAmountError(parsed.reason);
        setAmountError(undefined);
        void action
          .run((key) => api<InternalAccount>("POST", `/sandbox/internal-accounts/${encodeURIComponent(account.id)}/fund`, { body: { amount: toNumber(parsed.minor) }, idempotencyKey: key }))
          .then((a) => a && onFunded());
      }}
    >
      <Field label="Fund (sandbox)">
        <select name="accountId" value={account?.id} onChange={(e) => setAccountId(e.currentTarget.value)}>
          {accounts.map((a) => (
            <option key={a.id} value={a.id}>
              {a.balance.currency.code} · {a.type} · …{a.id.slice(-6)}
            </option>
          ))}
        </select>
      </Field>
      <Field label={`Amount (${currency?.code ?? ""})`}>
        <input name="amount" inputMode="decimal" placeholder="1,000.00" required />
      </Field>
      <button type="submit" disabled={action.busy}>
        Fund
      </button>
      {amountError ? <p class="error">{amountError}</p> : null}
      <ErrorBox error={action.error} />
      {action.result ? (
        <Notice tone="good">
          Funded: balance now <Money amount={action.result.balance.amount} currency={action.result.balance.currency} />.
        </Notice>
      ) : null}
    </Form>
  );
}

function AddBankAccount({ customerId, onAdded }: { customerId: string; onAdded: () => void }) {
  const api = useApi();
  const action = useAction<ExternalAccount>();
  const [open, setOpen] = useState(false);
  const [kind, setKind] = useState<"USD" | "EUR">("USD");
  if (!open) {
    return (
      <button type="button" class="secondary" onClick={() => setOpen(true)}>
        Add bank account
      </button>
    );
  }
  return (
    <Form
      onSubmit={(f) =>
        void action
          .run(() => {
            const accountInfo =
              kind === "USD"
                ? {
                    accountType: "USD_ACCOUNT",
                    accountNumber: f.accountNumber,
                    routingNumber: f.routingNumber,
                    bankAccountType: f.bankAccountType,
                    bankName: f.bankName,
                    beneficiary: { beneficiaryType: "INDIVIDUAL", fullName: f.beneficiary },
                  }
                : { accountType: "EUR_ACCOUNT", iban: f.iban, swiftCode: f.swiftCode };
            return api<ExternalAccount>("POST", "/customers/external-accounts", { body: { customerId, currency: kind, accountInfo } });
          })
          .then((a) => {
            if (a) {
              setOpen(false);
              onAdded();
            }
          })
      }
    >
      <p class="muted small">
        Sandbox outcomes by the account number's last three digits. A transfer out: 002 and 003 fail at once, 004 is rejected by the bank, 005 stays in flight ~30 s and then fails, any
        other completes. A quote payment: 003 stays in flight ~6 minutes (advance the clock on the Sandbox page), any other completes.
      </p>
      <div class="grid">
        <Field label="Kind">
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as "USD" | "EUR")}>
            <option value="USD">USD bank account (ACH)</option>
            <option value="EUR">EUR bank account (SEPA)</option>
          </select>
        </Field>
        {kind === "USD" ? (
          <>
            <Field label="Account number">
              <input name="accountNumber" required inputMode="numeric" />
            </Field>
            <Field label="Routing number" hint="Its checksum is verified">
              <input name="routingNumber" required defaultValue="021000021" inputMode="numeric" />
            </Field>
            <Field label="Account type">
              <select name="bankAccountType">
                <option>CHECKING</option>
                <option>SAVINGS</option>
              </select>
            </Field>
            <Field label="Bank name">
              <input name="bankName" defaultValue="Test Bank" />
            </Field>
            <Field label="Beneficiary full name">
              <input name="beneficiary" required />
            </Field>
          </>
        ) : (
          <>
            <Field label="IBAN">
              <input name="iban" required />
            </Field>
            <Field label="SWIFT code">
              <input name="swiftCode" />
            </Field>
          </>
        )}
      </div>
      <ErrorBox error={action.error} />
      <div class="row">
        <button type="submit" disabled={action.busy}>
          Add account
        </button>
        <button type="button" class="secondary" onClick={() => setOpen(false)}>
          Cancel
        </button>
      </div>
    </Form>
  );
}

function TransferOut({ internal, external, onSent }: { internal: InternalAccount[]; external: ExternalAccount[]; onSent: () => void }) {
  const api = useApi();
  const action = useAction<Transaction>();
  const [sourceId, setSourceId] = useState(preferredAccount(internal)?.id ?? "");
  const [amountError, setAmountError] = useState<string | undefined>(undefined);
  const source = internal.find((a) => a.id === sourceId) ?? internal[0];
  const currency = source?.balance.currency.code ?? "USD";
  const destinations = external.filter((a) => a.currency === currency);
  return (
    <Section title="Send a transfer out">
      <Form
        onSubmit={(f) => {
          if (!source) return;
          const parsed = parseMajor(f.amount ?? "", decimalsOf(currency));
          if (!parsed.ok) return setAmountError(parsed.reason);
          setAmountError(undefined);
          void action
            .run((key) =>
              api<Transaction>("POST", "/transfer-out", {
                body: compact({ source: { accountId: source.id }, destination: { accountId: f.destination }, amount: toNumber(parsed.minor), description: f.description }),
                idempotencyKey: key,
              }),
            )
            .then((t) => t && onSent());
        }}
      >
        <div class="grid">
          <Field label="From">
            <select name="source" value={source?.id} onChange={(e) => setSourceId(e.currentTarget.value)}>
              {internal.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.balance.currency.code} · …{a.id.slice(-6)}
                </option>
              ))}
            </select>
          </Field>
          <Field label="To">
            <select name="destination" required>
              {destinations.map((a) => (
                <option key={a.id} value={a.id}>
                  {describeExternal(a)}
                </option>
              ))}
            </select>
          </Field>
          <Field label={`Amount (${currency})`}>
            <input name="amount" inputMode="decimal" required placeholder="25.00" />
          </Field>
          <Field label="Description">
            <input name="description" />
          </Field>
        </div>
        {destinations.length === 0 ? <p class="muted">Add a {currency} bank account first.</p> : null}
        {amountError ? <p class="error">{amountError}</p> : null}
        <ErrorBox error={action.error} />
        {action.result ? (
          <Notice tone="good">
            Transfer <a href={href("transactions", action.result.id)}>{action.result.id}</a> is {action.result.status.toLowerCase()}.
          </Notice>
        ) : null}
        <button type="submit" disabled={action.busy || destinations.length === 0}>
          Send
        </button>
      </Form>
    </Section>
  );
}

interface Quote {
  id: string;
  status: string;
  expiresAt: string;
  sendingCurrency: { code: string; decimals: number };
  receivingCurrency: { code: string; decimals: number };
  totalSendingAmount: number;
  totalReceivingAmount: number;
  exchangeRate: number;
  feesIncluded: number;
  transactionId: string;
}

const RAILS: Record<string, string[]> = { USD: ["ACH", "WIRE", "RTP", "FEDNOW"], EUR: ["SEPA_INSTANT", "SEPA"], MXN: ["SPEI"], BRL: ["PIX"] };

/** Pays an external account (in any currency) through a quote: the rate is locked until it expires. */
function QuotePayment({ internal, external, onSent }: { internal: InternalAccount[]; external: ExternalAccount[]; onSent: () => void }) {
  const api = useApi();
  const quote = useAction<Quote>();
  const execute = useAction<Quote>();
  const [destinationId, setDestinationId] = useState(external[0]?.id ?? "");
  const [amountError, setAmountError] = useState<string | undefined>(undefined);
  const destination = external.find((a) => a.id === destinationId) ?? external[0];
  const rails = destination ? (RAILS[destination.currency] ?? []) : [];
  const q = quote.result;
  return (
    <Section title="Pay with a quote">
      <Form
        onSubmit={(f) => {
          const source = internal.find((a) => a.id === f.source) ?? internal[0];
          if (!source || !destination) return;
          const parsed = parseMajor(f.amount ?? "", source.balance.currency.decimals);
          if (!parsed.ok) return setAmountError(parsed.reason);
          setAmountError(undefined);
          execute.setResult(undefined);
          void quote.run((key) =>
            api<Quote>("POST", "/quotes", {
              body: compact({
                source: { sourceType: "ACCOUNT", accountId: source.id },
                destination: compact({ destinationType: "ACCOUNT", accountId: destination.id, paymentRail: f.paymentRail }),
                lockedCurrencySide: "SENDING",
                lockedCurrencyAmount: toNumber(parsed.minor),
                description: f.description,
              }),
              idempotencyKey: key,
            }),
          );
        }}
      >
        <div class="grid">
          <Field label="From">
            <select name="source" defaultValue={preferredAccount(internal)?.id}>
              {internal.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.balance.currency.code} · …{a.id.slice(-6)}
                </option>
              ))}
            </select>
          </Field>
          <Field label="To">
            <select name="destination" value={destination?.id} onChange={(e) => setDestinationId(e.currentTarget.value)}>
              {external.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.currency} · {describeExternal(a)}
                </option>
              ))}
            </select>
          </Field>
          {rails.length ? (
            <Field label="Rail">
              <select name="paymentRail" key={destination?.currency}>
                {rails.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            </Field>
          ) : null}
          <Field label="Amount to send">
            <input name="amount" inputMode="decimal" required placeholder="50.00" />
          </Field>
        </div>
        {amountError ? <p class="error">{amountError}</p> : null}
        <ErrorBox error={quote.error} />
        <button type="submit" class="secondary" disabled={quote.busy}>
          Get a quote
        </button>
      </Form>
      {q ? (
        <div class="quote">
          <Facts
            rows={[
              ["You send", <Money amount={q.totalSendingAmount} currency={q.sendingCurrency} />],
              ["Fees included", <Money amount={q.feesIncluded} currency={q.sendingCurrency} />],
              ["Rate", `1 ${q.sendingCurrency.code} = ${q.exchangeRate} ${q.receivingCurrency.code}`],
              ["They receive", <Money amount={q.totalReceivingAmount} currency={q.receivingCurrency} />],
              ["Locked until", formatTime(q.expiresAt)],
            ]}
          />
          <ErrorBox error={execute.error} />
          {execute.result ? (
            <Notice tone="good">
              Paying: transaction <a href={href("transactions", execute.result.transactionId)}>{execute.result.transactionId}</a> is {execute.result.status.toLowerCase()}.
            </Notice>
          ) : (
            <button
              type="button"
              disabled={execute.busy}
              onClick={() => void execute.run((key) => api<Quote>("POST", `/quotes/${encodeURIComponent(q.id)}/execute`, { idempotencyKey: key })).then((r) => r && onSent())}
            >
              Execute the quote
            </button>
          )}
        </div>
      ) : null}
    </Section>
  );
}

function BeneficialOwners({ customerId }: { customerId: string }) {
  const api = useApi();
  const owners = useAsync(() => api<Page<BeneficialOwner>>("GET", "/beneficial-owners", { query: { customerId, limit: 100 } }), [customerId]);
  return (
    <Section title="Beneficial owners">
      <ErrorBox error={owners.error} />
      <Table head={["Name", "Roles", "Ownership", "KYC"]} empty="No beneficial owner yet (POST /beneficial-owners).">
        {(owners.data?.data ?? []).map((o) => (
          <tr key={o.id}>
            <td>
              {o.personalInfo.firstName} {o.personalInfo.lastName}
            </td>
            <td>{o.roles.join(", ")}</td>
            <td class="num">{o.ownershipPercentage}%</td>
            <td>
              <Status value={o.kycStatus} />
            </td>
          </tr>
        ))}
      </Table>
    </Section>
  );
}
