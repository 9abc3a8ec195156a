import { mkdirSync, mkdtempSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type Caller, type TestSystem } from "../e2e/harness.js";
import { browserRequired, findChromium } from "./chromium.js";

// The console's journeys in a real browser (Debian's Chromium driven by playwright-core), against
// the embedded system: sign in, create and verify a customer, fund, send a transfer out, watch it
// complete after a sandbox clock advance, see its webhook delivery, approve an agent action.
// One browser and one system for the whole file. Screenshots of each page (1280 px wide) go to
// CORRIDOR_CONSOLE_SCREENSHOTS when set (`CORRIDOR_CONSOLE_SCREENSHOTS=docs/console` refreshes the
// README's), else to a temporary folder.

process.env.NOTIFICATIONS_DELIVERY_POLL_MS ??= "100";

const chromiumFound = findChromium();
const skip = chromiumFound.path === undefined && !browserRequired;
if (skip) console.warn(`[browser] the console's browser suite is skipped: ${chromiumFound.reason}`);

interface Received {
  id: string;
  type: string;
  body: string;
}

describe.skipIf(skip)(`the console in Chromium${chromiumFound.path ? "" : ` — ${browserRequired ? "cannot run" : "skipped"}: ${chromiumFound.reason}`}`, () => {
  let system: TestSystem;
  let p: Caller;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let receiver: Server;
  let consoleUrl: string;
  const received: Received[] = [];
  const pageErrors: string[] = [];
  const shotsDir = process.env.CORRIDOR_CONSOLE_SCREENSHOTS ? resolve(process.env.CORRIDOR_CONSOLE_SCREENSHOTS) : mkdtempSync(join(tmpdir(), "corridor-console-"));
  // What the journey makes, for the later steps.
  let customerId = "";
  let transactionId = "";

  const shot = async (name: string) => {
    // From the top, so the sticky header sits where it belongs in a full-page picture.
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: join(shotsDir, `${name}.png`), fullPage: true });
  };
  const go = async (hash: string) => {
    await page.goto(`${consoleUrl}#/${hash}`);
  };
  /** A card (section) of the page by its heading. */
  const card = (title: string): Locator => page.locator("section.card").filter({ has: page.locator("h2", { hasText: title }) });
  const see = (text: string | RegExp, within: Page | Locator = page) => within.getByText(text).first().waitFor();

  beforeAll(async () => {
    if (!chromiumFound.path) throw new Error(`the browser suite must run in CI: ${chromiumFound.reason}`);
    mkdirSync(shotsDir, { recursive: true });
    receiver = createServer((req: IncomingMessage, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ id: String(req.headers["webhook-id"]), type: (JSON.parse(body) as { type: string }).type, body });
        res.writeHead(200, { "content-type": "text/plain" }).end("thanks");
      });
    });
    await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
    [system, browser] = await Promise.all([
      startTestSystem(),
      chromium.launch({
        executablePath: chromiumFound.path,
        // Root (CI, containers) cannot use Chromium's sandbox; /dev/shm is small in containers.
        args: [...(process.getuid?.() === 0 ? ["--no-sandbox"] : []), "--disable-dev-shm-usage"],
      }),
    ]);
    p = await system.createPlatform({ name: "Console platform" });
    consoleUrl = `${system.url}/console/`;
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, timezoneId: "UTC", locale: "en-US" });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on("pageerror", (err) => pageErrors.push(`page error: ${err.message}`));
    // A CSP violation or a failed asset shows as a console error.
    page.on("console", (msg) => {
      if (msg.type() === "error" && !/status of 4\d\d/.test(msg.text())) pageErrors.push(`console: ${msg.text()}`);
    });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await system?.stop();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
  });

  it("signs in with the API token; a wrong secret is refused in words, with its code and Request-Id", async () => {
    await page.goto(consoleUrl);
    await shot("sign-in");
    await page.fill("input[name=clientId]", p.clientId);
    await page.fill("input[name=clientSecret]", "not-the-secret");
    await page.click("button[type=submit]");
    const error = page.locator(".error").first();
    await error.waitFor();
    expect(await error.textContent()).toMatch(/UNAUTHORIZED.*Request-Id.*Request:/);

    await page.fill("input[name=clientSecret]", p.clientSecret);
    await page.click("button[type=submit]");
    await page.getByRole("navigation", { name: "Sections" }).waitFor();
    await see("Find customers");
    // Kept for this tab only, and the page reloads signed in.
    expect(await page.evaluate<string[]>("Object.keys(sessionStorage)")).toEqual(["corridor.console.credentials"]);
    expect(await page.evaluate<number>("localStorage.length")).toBe(0);
    await page.reload();
    await see("Find customers");
  });

  it("sets the webhook endpoint and sends a TEST webhook that arrives", async () => {
    await go("webhooks");
    const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    await page.fill("input[name=webhookEndpoint]", endpoint);
    await page.getByRole("button", { name: "Save" }).click();
    await see("Saved.");
    // notifications learns the endpoint from an event: a TEST sent before may not reach it yet.
    await eventually(async () => {
      await page.getByRole("button", { name: "Send a TEST webhook" }).click();
      const notice = page.locator(".notice", { hasText: "TEST webhook to" });
      // Before notifications knows the endpoint the answer is a 400 (no notice): click again.
      await notice.waitFor({ timeout: 3_000 });
      return (await notice.textContent())?.includes("delivered (HTTP 200)") ? true : undefined;
    });
    expect(received.some((r) => r.type === "TEST")).toBe(true);
  });

  it("creates a customer and verifies it (KYC APPROVED)", async () => {
    await go("customers");
    await page.getByRole("button", { name: "New customer" }).click();
    const form = card("New customer");
    await form.locator("input[name=platformCustomerId]").fill("ada-1");
    await form.locator("input[name=fullName]").fill("Ada Lovelace");
    await form.locator("input[name=birthDate]").fill("1990-12-10");
    await form.locator("input[name=nationality]").fill("GB");
    await form.locator("input[name=email]").fill("ada@example.com");
    await form.locator("input[name=line1]").fill("1 Main St");
    await form.locator("input[name=city]").fill("New York");
    await form.locator("input[name=postalCode]").fill("10001");
    await form.getByRole("button", { name: "Create customer" }).click();
    await page.getByRole("heading", { name: "Ada Lovelace", level: 1 }).waitFor();
    customerId = decodeURIComponent(page.url().split("#/customers/")[1] ?? "");
    expect(customerId).toMatch(/^Customer:/);

    await page.getByRole("button", { name: "Verify", exact: true }).click();
    await see("Verification approved.");
    await card("Profile").locator(".badge", { hasText: "APPROVED" }).waitFor();
    await card("Verifications").locator(".badge", { hasText: "APPROVED" }).waitFor();
  });

  it("funds the customer's USD account, shown in major units", async () => {
    const accounts = card("Internal accounts");
    // The ledger opens the account a moment after the customer exists; the page looks again.
    await accounts.locator("td", { hasText: "0.00 USD" }).waitFor();
    await accounts.locator("input[name=amount]").fill("1.234");
    await accounts.getByRole("button", { name: "Fund" }).click();
    await see("At most 2 digits after the decimal point.", accounts);
    await accounts.locator("input[name=amount]").fill("1,000.00");
    await accounts.getByRole("button", { name: "Fund" }).click();
    await see("Funded: balance now 1,000.00 USD", accounts);
    await accounts.locator("td", { hasText: "1,000.00 USD" }).waitFor();
  });

  it("adds bank accounts; a transfer out completes, and a quote payment completes after a sandbox clock advance", async () => {
    const external = card("External accounts");
    const addAccount = async (accountNumber: string) => {
      await external.getByRole("button", { name: "Add bank account" }).click();
      await external.locator("input[name=accountNumber]").fill(accountNumber);
      await external.locator("input[name=beneficiary]").fill("Ada Lovelace");
      await external.getByRole("button", { name: "Add account" }).click();
      await external.locator("td", { hasText: `…${accountNumber.slice(-4)}` }).waitFor();
    };
    await addAccount("123456789");
    // Ending in 003: the sandbox rail keeps a quote's payout in flight for ~6 minutes.
    await addAccount("123456003");

    const transfer = card("Send a transfer out");
    await transfer.locator("select[name=destination]").selectOption({ label: "USD ACCOUNT · Test Bank · …6789" });
    // More than the balance: the API's refusal is shown in words, with its code and Request-Id.
    await transfer.locator("input[name=amount]").fill("5,000.00");
    await transfer.getByRole("button", { name: "Send" }).click();
    const refusal = transfer.locator(".error");
    await refusal.waitFor();
    expect(await refusal.textContent()).toMatch(/code\s*[A-Z_]+.*Request-Id\s*Request:/);
    await transfer.locator("input[name=amount]").fill("25.00");
    await transfer.getByRole("button", { name: "Send" }).click();
    const sent = transfer.locator(".notice", { hasText: "Transfer Transaction:" });
    await sent.waitFor();
    const transferId = (await sent.locator("a").textContent()) ?? "";
    expect(transferId).toMatch(/^Transaction:/);
    await card("Internal accounts").locator("td", { hasText: "975.00 USD" }).waitFor();

    const pay = card("Pay with a quote");
    await pay.locator("select[name=destination]").selectOption({ label: "USD · USD ACCOUNT · Test Bank · …6003" });
    await pay.locator("input[name=amount]").fill("50.00");
    await pay.getByRole("button", { name: "Get a quote" }).click();
    await see("You send", pay);
    await see("Locked until", pay);
    await pay.getByRole("button", { name: "Execute the quote" }).click();
    const paying = pay.locator(".notice", { hasText: "Paying: transaction" });
    await paying.waitFor();
    transactionId = (await paying.locator("a").textContent()) ?? "";
    expect(transactionId).toMatch(/^Transaction:/);
    await shot("customer");

    // The transfer out: the page follows it to COMPLETED, with its timeline and the webhook it caused.
    await sent.locator("a").click();
    await page.getByRole("heading", { name: /Outgoing 25\.00 USD/ }).waitFor();
    await page.locator(".page-head .badge", { hasText: "COMPLETED" }).waitFor({ timeout: 20_000 });
    await card("Timeline").getByText("OUTGOING PAYMENT COMPLETED").waitFor();

    // The quote payment is in flight until the sandbox clock moves 6 minutes on.
    await go(`transactions/${encodeURIComponent(transactionId)}`);
    await page.getByRole("heading", { name: /Outgoing 50\.00 USD/ }).waitFor();
    await page.locator(".page-head .badge", { hasText: "PROCESSING" }).waitFor();
    await card("Rate details").waitFor();

    await go("sandbox");
    const clock = card("Advance the clock");
    await clock.locator("input[name=seconds]").fill("361");
    await clock.getByRole("button", { name: "Advance" }).click();
    await see(/Sandbox time is now .* \(361 s ahead\)/, clock);
    // An incoming UMA payment to the customer's UMA address (picked from the customers that have one).
    const uma = card("Simulate an incoming UMA payment");
    expect(await uma.locator("select[name=receiver]").inputValue()).toMatch(/^\$ada-1@/);
    await uma.locator("input[name=amount]").fill("10.00");
    await uma.getByRole("button", { name: "Receive payment" }).click();
    await see(/Incoming payment Transaction:\S+ is completed\./, uma);
    await shot("sandbox");

    await go(`transactions/${encodeURIComponent(transactionId)}`);
    // The page follows a moving transaction by itself.
    await page.locator(".page-head .badge", { hasText: "COMPLETED" }).waitFor({ timeout: 20_000 });
    const timeline = card("Timeline");
    await timeline.getByText("OUTGOING PAYMENT COMPLETED").waitFor();
    expect(await timeline.locator("li").count()).toBeGreaterThanOrEqual(3);
    const caused = card("Webhooks it caused");
    await caused.locator("tr", { hasText: "OUTGOING_PAYMENT_COMPLETED" }).locator(".badge", { hasText: "DELIVERED" }).waitFor({ timeout: 20_000 });
    await shot("transaction");

    await go(`transactions?customerId=${encodeURIComponent(customerId)}`);
    await page.locator("td", { hasText: "25.00 USD" }).waitFor();
    await page.locator("td", { hasText: "50.00 USD" }).waitFor();
    await shot("transactions");
  }, 90_000);

  it("shows the webhook delivery with its payload and attempts, and redelivers it", async () => {
    await go(`transactions/${encodeURIComponent(transactionId)}`);
    await card("Webhooks it caused").locator("tr", { hasText: "OUTGOING_PAYMENT_COMPLETED" }).locator("a").click();
    await page.getByRole("heading", { name: "OUTGOING PAYMENT COMPLETED" }).waitFor();
    const eventId = decodeURIComponent(page.url().split("#/webhooks/")[1] ?? "");
    expect(eventId).toMatch(/^Webhook:/);
    const attempts = card("Attempts");
    await attempts.locator(".badge", { hasText: "200" }).waitFor();
    expect(await attempts.textContent()).toContain("thanks");
    expect(await card("Payload").textContent()).toContain(transactionId);

    await page.getByRole("button", { name: "Redeliver" }).click();
    await see("Queued again for the current endpoint");
    await eventually(async () => (received.filter((r) => r.id === eventId).length >= 2 ? true : undefined));
    await eventually(async () => {
      await page.getByRole("button", { name: "Refresh" }).click();
      return (await attempts.locator("tbody tr").count()) >= 2 ? true : undefined;
    });
    await shot("webhook-event");

    await go("webhooks");
    await card("Deliveries").locator("tr", { hasText: "OUTGOING_PAYMENT_COMPLETED" }).first().waitFor();
    await shot("webhooks");
  }, 60_000);

  it("creates an agent, and approves the action it submits from the approvals queue", async () => {
    // From the customer's page: its agents, and a new one for it.
    await go(`customers/${encodeURIComponent(customerId)}`);
    await page.getByRole("link", { name: "Its agents →" }).click();
    await page.getByRole("button", { name: "New agent" }).click();
    const form = card("New agent");
    expect(await form.locator("input[name=customerId]").inputValue()).toBe(customerId);
    await form.locator("input[name=name]").fill("Bookkeeper");
    await form.locator("select[name=defaultExecutionMode]").selectOption("APPROVAL_REQUIRED");
    await form.locator("input[name=dailyLimit]").fill("500");
    await form.getByRole("button", { name: "Create agent" }).click();
    const created = form.locator(".notice", { hasText: "device code" });
    await created.waitFor();
    const code = (await created.locator("code.big").textContent()) ?? "";

    // The agent's software: redeems its code once, then asks to pay out 10.00 USD from the customer's account.
    const redeemed = await system.raw("POST", `/2025-10-13/agents/device-codes/${code}/redeem`);
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const agentId = redeemed.body.agentId as string;
    const bearer = { authorization: `Bearer ${redeemed.body.accessToken}`, "content-type": "application/json" };
    const accounts = (await p.call("GET", `/customers/internal-accounts?customerId=${encodeURIComponent(customerId)}`)).body.data;
    const externals = (await p.call("GET", `/customers/external-accounts?customerId=${encodeURIComponent(customerId)}`)).body.data;
    const payee = externals.find((e: { accountInfo?: { accountNumber?: string } }) => e.accountInfo?.accountNumber?.endsWith("6789"));
    expect(payee, JSON.stringify(externals)).toBeDefined();
    const submitted = await system.raw("POST", "/2025-10-13/agents/me/transfer-out", {
      headers: bearer,
      // The account ending 6789: a transfer out to it completes (one ending 003 would fail on the rail and give the usage back).
      body: JSON.stringify({ source: { accountId: accounts[0].id }, destination: { accountId: payee.id }, amount: 1000 }),
    });
    expect(submitted.status, JSON.stringify(submitted.body)).toBe(201);
    expect(submitted.body.status).toBe("PENDING_APPROVAL");

    const queue = card("Approvals queue");
    await queue.getByRole("button", { name: "Refresh" }).click();
    const row = queue.locator("tr", { hasText: "10.00 USD" });
    await row.waitFor();
    await shot("agents");
    await row.getByRole("button", { name: "Approve" }).click();
    await see(/is approved: transaction Transaction:/, queue);
    await queue.getByText("Nothing waits for approval.").waitFor();

    await go(`agents/${encodeURIComponent(agentId)}`);
    await page.getByRole("heading", { name: "Bookkeeper" }).waitFor();
    // Usage is counted by the agents service as the action goes through: look again until it shows.
    let usage = "";
    try {
      await eventually(async () => {
        usage = (await card("Usage against limits").textContent()) ?? "";
        if (usage.includes("10.00 USD of 500.00 USD")) return true;
        await page.reload();
        await page.getByRole("heading", { name: "Bookkeeper" }).waitFor();
        return undefined;
      }, 30_000);
    } catch (err) {
      throw new Error(`usage never showed 10.00 USD of 500.00 USD; last seen: ${usage}`, { cause: err });
    }
    await see("every action needs approval", card("Policy"));
    await shot("agent");

    // A second action, rejected with a reason from the agent's own page: nothing moves.
    const second = await system.raw("POST", "/2025-10-13/agents/me/transfer-out", {
      headers: bearer,
      body: JSON.stringify({ source: { accountId: accounts[0].id }, destination: { accountId: externals[0].id }, amount: 777 }),
    });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    await card("Approvals queue").getByRole("button", { name: "Refresh" }).click();
    const secondRow = card("Approvals queue").locator("tr", { hasText: "7.77 USD" });
    await secondRow.getByRole("button", { name: "Reject…" }).click();
    await secondRow.locator("input[name=reason]").fill("not today");
    await secondRow.getByRole("button", { name: "Reject", exact: true }).click();
    await see(/is rejected\./, card("Approvals queue"));
    const action = await system.raw("GET", `/2025-10-13/agents/me/actions/${second.body.id}`, { headers: { authorization: bearer.authorization } });
    expect(action.body).toMatchObject({ status: "REJECTED", rejectionReason: "not today" });
  });

  it("creates an API token whose secret is shown once, and revokes it", async () => {
    await go("tokens");
    const form = card("New token");
    await form.locator("input[name=name]").fill("dashboard");
    await form.getByRole("button", { name: "Create token" }).click();
    await see("Copy the secret now: it is shown only once.", form);
    const clientId = (await form.locator("code.big").first().textContent()) ?? "";
    const secret = (await form.locator("code.secret-value").textContent()) ?? "";
    expect((await system.as(clientId, secret).call("GET", "/config")).status).toBe(200);
    await shot("tokens");

    const row = card("Tokens").locator("tr", { hasText: "dashboard" });
    await row.getByRole("button", { name: "Revoke…" }).click();
    await row.getByRole("button", { name: "Revoke now" }).click();
    await see("Token dashboard revoked");
    await eventually(async () => ((await system.as(clientId, secret).call("GET", "/config")).status === 401 ? true : undefined));
  });

  it("pages long lists, and the customers list shows KYC status", async () => {
    for (let i = 0; i < 21; i++) {
      const res = await p.call("POST", "/customers", { customerType: "INDIVIDUAL", platformCustomerId: `bulk-${i}`, fullName: `Customer ${i}`, region: "US" });
      expect(res.status).toBe(201);
    }
    await go("customers");
    await see("Page 1 · 22 in all");
    await eventually(async () => ((await page.locator("tbody tr").count()) === 20 ? true : undefined));
    await page.getByRole("button", { name: "Next →" }).click();
    await see("Page 2 · 22 in all");
    await eventually(async () => ((await page.locator("tbody tr").count()) === 2 ? true : undefined));
    await page.getByRole("button", { name: "← Previous" }).click();
    await see("Page 1 · 22 in all");
    await go("customers?platformCustomerId=ada-1");
    await eventually(async () => ((await page.locator("tbody tr").count()) === 1 ? true : undefined));
    await page.locator("tr", { hasText: "Ada Lovelace" }).locator(".badge", { hasText: "APPROVED" }).waitFor();
    // A business: its KYB status and beneficial owners.
    const acme = await p.call("POST", "/customers", {
      customerType: "BUSINESS",
      platformCustomerId: "acme",
      businessInfo: { legalName: "Acme Inc", registrationNumber: "REG-123", taxId: "12-3456789" },
      address: { line1: "2 Market St", postalCode: "94105", country: "US" },
      region: "US",
    });
    expect(acme.status, JSON.stringify(acme.body)).toBe(201);
    const ownerRes = await p.call("POST", "/beneficial-owners", {
      customerId: acme.body.id,
      roles: ["UBO", "DIRECTOR"],
      ownershipPercentage: 40,
      personalInfo: {
        firstName: "Jane",
        lastName: "Doe",
        birthDate: "1980-01-31",
        nationality: "US",
        address: { line1: "2 Market St", postalCode: "94105", country: "US" },
        idType: "SSN",
        identifier: "123-45-6789",
      },
    });
    expect(ownerRes.status, JSON.stringify(ownerRes.body)).toBe(201);
    await go(`customers/${encodeURIComponent(acme.body.id)}`);
    await page.getByRole("heading", { name: "Acme Inc" }).waitFor();
    await see("KYB status", card("Profile"));
    await card("Beneficial owners").locator("tr", { hasText: "Jane Doe" }).locator("td", { hasText: "UBO, DIRECTOR" }).waitFor();

    // A customer not verified yet: the hosted KYC page's single-use link.
    await go("customers?platformCustomerId=bulk-0");
    await page.locator("tr", { hasText: "Customer 0" }).locator("a").click();
    await page.getByRole("heading", { name: "Customer 0" }).waitFor();
    await page.getByRole("button", { name: "Hosted KYC link" }).click();
    const link = page.locator(".notice", { hasText: "single-use page" }).locator("a");
    expect(await link.getAttribute("href")).toMatch(new RegExp(`^${system.url}/kyc/`));
    expect((await system.raw("GET", new URL((await link.getAttribute("href"))!).pathname)).status).toBe(200);

    await go("customers");
    await see("Page 1 · 23 in all");
    await shot("customers");
  });

  it("fits a 390 px wide screen: no sideways scrolling of the page, the menu folds", { timeout: 60_000 }, async () => {
    // The same tab (the credentials are this tab's), narrowed to a phone's width.
    const phone = page;
    await phone.setViewportSize({ width: 390, height: 844 });
    try {
      for (const hash of ["customers", `customers/${encodeURIComponent(customerId)}`, `transactions/${encodeURIComponent(transactionId)}`, "webhooks", "agents", "sandbox", "tokens"]) {
        await go(hash);
        await phone.locator("main.content h1").first().waitFor();
        await phone.locator(".muted", { hasText: "Loading…" }).first().waitFor({ state: "detached" }).catch(() => undefined);
        await phone.waitForTimeout(200);
        const width = await phone.evaluate<number>("document.documentElement.scrollWidth");
        expect(width, `#/${hash} is ${width} px wide`).toBeLessThanOrEqual(390);
      }
      const nav = phone.getByRole("navigation", { name: "Sections" });
      expect(await nav.isVisible()).toBe(false);
      await phone.getByRole("button", { name: "Menu" }).click();
      await nav.getByRole("link", { name: "Sandbox" }).click();
      await phone.getByRole("heading", { name: "Sandbox", level: 1 }).waitFor();
      await go(`customers/${encodeURIComponent(customerId)}`);
      await phone.getByRole("heading", { name: "Ada Lovelace" }).waitFor();
      await phone.locator("td", { hasText: /\d\.\d\d USD/ }).first().waitFor();
      await phone.screenshot({ path: join(shotsDir, "customer-390px.png"), fullPage: false });
    } finally {
      await phone.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("links the API reference, and saw no script error or CSP violation on the way", async () => {
    const link = page.getByRole("link", { name: /API reference/ });
    expect(await link.getAttribute("href")).toBe("/2025-10-13/docs/");
    const docs = await system.raw("GET", "/2025-10-13/docs/");
    expect(docs.status).toBe(200);
    expect(pageErrors).toEqual([]);
  });
});
