import { render } from "preact";
import { useMemo, useState } from "preact/hooks";
import { ApiError, DOCS_URL, clearCredentials, createApi, loadCredentials, saveCredentials, signIn, type Credentials } from "./api.js";
import { rememberCurrency } from "./format.js";
import { AgentsPage } from "./pages/agents.js";
import { CustomersPage } from "./pages/customers.js";
import { SandboxPage } from "./pages/sandbox.js";
import { TokensPage } from "./pages/tokens.js";
import { TransactionsPage } from "./pages/transactions.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { ApiContext, ErrorBox, Field, Form, href, useAction, useAsync, useRoute } from "./ui.js";

const NAV: [string, string][] = [
  ["customers", "Customers"],
  ["transactions", "Transactions"],
  ["webhooks", "Webhooks"],
  ["agents", "Agents"],
  ["sandbox", "Sandbox"],
  ["tokens", "Tokens"],
];

function SignIn({ onSignedIn, reason }: { onSignedIn: (c: Credentials) => void; reason?: string }) {
  const action = useAction<Credentials>();
  return (
    <main class="signin">
      <div class="card signin-card">
        <h1>
          <span class="logo" aria-hidden="true">
            ◆
          </span>{" "}
          Corridor console
        </h1>
        <p class="muted">Sign in with an API token: the clientId and clientSecret that npm start printed, or any token made with POST /tokens.</p>
        {reason ? <p class="notice warn">{reason}</p> : null}
        <Form
          onSubmit={(f) =>
            void action.run(async () => {
              const creds = { clientId: (f.clientId ?? "").trim(), clientSecret: f.clientSecret ?? "" };
              await signIn(creds);
              saveCredentials(creds);
              onSignedIn(creds);
              return creds;
            })
          }
        >
          <Field label="Client ID">
            <input name="clientId" autocomplete="username" required placeholder="cli_…" />
          </Field>
          <Field label="Client secret" hint="Kept in this tab's session storage only, and sent as HTTP Basic to the API.">
            <input name="clientSecret" type="password" autocomplete="current-password" required />
          </Field>
          <ErrorBox error={action.error} />
          <button type="submit" disabled={action.busy}>
            {action.busy ? "Signing in…" : "Sign in"}
          </button>
        </Form>
        <p class="muted small">
          New here? Read the <a href={DOCS_URL}>API reference</a>.
        </p>
      </div>
    </main>
  );
}

function Shell({ creds, onSignOut }: { creds: Credentials; onSignOut: (reason?: string) => void }) {
  const route = useRoute();
  const api = useMemo(
    () =>
      createApi(creds, (err: ApiError) => {
        onSignOut(`The API refused these credentials (${err.code}): sign in again.`);
      }),
    [creds],
  );
  // The platform's own accounts describe its currencies (code and decimals) for amounts given by code only.
  useAsync(async () => {
    const res = await api<{ data: { balance: { currency: { code: string; decimals: number } } }[] }>("GET", "/platform/internal-accounts");
    for (const a of res.data) rememberCurrency(a.balance.currency);
  }, [api]);
  const [menuOpen, setMenuOpen] = useState(false);
  const section = route.path[0] ?? "customers";
  let page;
  switch (section) {
    case "transactions":
      page = <TransactionsPage route={route} />;
      break;
    case "webhooks":
      page = <WebhooksPage route={route} />;
      break;
    case "agents":
      page = <AgentsPage route={route} />;
      break;
    case "sandbox":
      page = <SandboxPage />;
      break;
    case "tokens":
      page = <TokensPage creds={creds} />;
      break;
    default:
      page = <CustomersPage route={route} />;
  }
  return (
    <ApiContext.Provider value={api}>
      <div class="shell">
        <header class="topbar">
          <a class="brand" href={href("customers")}>
            <span class="logo" aria-hidden="true">
              ◆
            </span>{" "}
            Corridor <span class="muted">sandbox console</span>
          </a>
          <button type="button" class="secondary menu-toggle" aria-expanded={menuOpen} onClick={() => setMenuOpen(!menuOpen)}>
            Menu
          </button>
          <nav class={menuOpen ? "nav open" : "nav"} aria-label="Sections" onClick={() => setMenuOpen(false)}>
            {NAV.map(([key, label]) => (
              <a key={key} href={href(key)} class={section === key ? "active" : ""} aria-current={section === key ? "page" : undefined}>
                {label}
              </a>
            ))}
            <a href={DOCS_URL} target="_blank" rel="noopener">
              API reference ↗
            </a>
          </nav>
          <div class="who">
            <code title="Signed in with this API token">{creds.clientId}</code>
            <button type="button" class="secondary" onClick={() => onSignOut()}>
              Sign out
            </button>
          </div>
        </header>
        <main class="content">{page}</main>
      </div>
    </ApiContext.Provider>
  );
}

function App() {
  const [creds, setCreds] = useState<Credentials | undefined>(loadCredentials);
  const [reason, setReason] = useState<string | undefined>(undefined);
  if (!creds) {
    return (
      <SignIn
        reason={reason}
        onSignedIn={(c) => {
          setReason(undefined);
          setCreds(c);
        }}
      />
    );
  }
  return (
    <Shell
      creds={creds}
      onSignOut={(why) => {
        clearCredentials();
        setReason(why);
        setCreds(undefined);
      }}
    />
  );
}

const root = document.getElementById("app");
if (root) render(<App />, root);
