import { useState } from "preact/hooks";
import type { Credentials, Page } from "../api.js";
import { formatTime } from "../format.js";
import type { Token } from "../types.js";
import { ErrorBox, Field, Form, Id, Loading, Notice, PAGE_SIZE, Pager, Section, Table, useAction, useApi, usePaged } from "../ui.js";

const PERMISSIONS = ["VIEW", "TRANSACT", "MANAGE"];

export function TokensPage({ creds }: { creds: Credentials }) {
  const api = useApi();
  const list = usePaged((cursor) => api<Page<Token>>("GET", "/tokens", { query: { limit: PAGE_SIZE, cursor } }), []);
  const create = useAction<Token>();
  const revoke = useAction<Token>();
  const [confirming, setConfirming] = useState<string | undefined>(undefined);
  return (
    <>
      <div class="page-head">
        <h1>API tokens</h1>
      </div>
      <Section title="New token">
        <Form
          onSubmit={(f, form) =>
            void create
              .run(() => api<Token>("POST", "/tokens", { body: { name: f.name, permissions: f.permissions ? f.permissions.split(",") : [] } }))
              .then((t) => {
                if (t) {
                  form.reset();
                  list.reload();
                }
              })
          }
        >
          <div class="grid">
            <Field label="Name">
              <input name="name" required placeholder="dashboard" />
            </Field>
          </div>
          <fieldset class="checks">
            <legend>Permissions</legend>
            {PERMISSIONS.map((p) => (
              <label key={p} class="check">
                <input type="checkbox" name="permissions" value={p} defaultChecked={p === "VIEW"} /> {p}
              </label>
            ))}
          </fieldset>
          <ErrorBox error={create.error} />
          <button type="submit" disabled={create.busy}>
            Create token
          </button>
        </Form>
        {create.result?.clientSecret ? (
          <Notice tone="warn">
            <p>
              <strong>Copy the secret now: it is shown only once.</strong>
            </p>
            <p>
              clientId <code class="big">{create.result.clientId}</code>
            </p>
            <p>
              clientSecret <code class="big secret-value">{create.result.clientSecret}</code>
            </p>
          </Notice>
        ) : null}
      </Section>
      <Section title="Tokens">
        <ErrorBox error={list.error} />
        <ErrorBox error={revoke.error} />
        {revoke.result ? <Notice tone="good">Token {revoke.result.name} revoked: it stopped working at once.</Notice> : null}
        {list.loading && !list.data ? <Loading /> : null}
        {list.data ? (
          <>
            <Table head={["Name", "Client id", "Permissions", "Created", ""]} empty="No token.">
              {list.data.data.map((t) => (
                <tr key={t.id}>
                  <td>{t.name}</td>
                  <td>
                    <Id id={t.clientId} />
                    {t.clientId === creds.clientId ? <span class="badge plain">this session</span> : null}
                  </td>
                  <td>{t.permissions.join(", ")}</td>
                  <td>{formatTime(t.createdAt)}</td>
                  <td>
                    {confirming === t.id ? (
                      <div class="row">
                        <button
                          type="button"
                          class="danger"
                          disabled={revoke.busy}
                          onClick={() =>
                            void revoke
                              .run(async () => {
                                await api("DELETE", `/tokens/${encodeURIComponent(t.id)}`);
                                return t;
                              })
                              .then((r) => {
                              setConfirming(undefined);
                              if (r) list.reload();
                            })
                          }
                        >
                          Revoke now
                        </button>
                        <button type="button" class="secondary" onClick={() => setConfirming(undefined)}>
                          Cancel
                        </button>
                      </div>
                    ) : (
                      <button type="button" class="secondary" onClick={() => setConfirming(t.id)}>
                        Revoke…
                      </button>
                    )}
                  </td>
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
