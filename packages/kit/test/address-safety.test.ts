import { describe, expect, it } from "vitest";
import {
  checkedAddresses,
  checkUrlTarget,
  classifyAddress,
  loadConfig,
  targetPolicy,
  TargetRefusedError,
  webhookTargetSettingsSchema,
  type TargetPolicy,
} from "../src/index.js";

const settings = (env: NodeJS.ProcessEnv = {}) => loadConfig(webhookTargetSettingsSchema, env);
const production = targetPolicy("PRODUCTION", settings());
const sandbox = targetPolicy("SANDBOX", settings());
const sandboxNoLoopback = targetPolicy("SANDBOX", settings({ CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: "false" }));

function ruleOf(url: string, policy: TargetPolicy): string | undefined {
  const r = checkUrlTarget(url, policy);
  return "problem" in r ? r.problem.rule : undefined;
}
function reasonOf(url: string, policy: TargetPolicy): string {
  const r = checkUrlTarget(url, policy);
  return "problem" in r ? r.problem.reason : "";
}

describe("address classification (ipaddr.js ranges, IPv6 public only in 2000::/3)", () => {
  it.each([
    ["8.8.8.8", "public"],
    ["93.184.216.34", "public"],
    ["2606:4700:4700::1111", "public"],
    ["127.0.0.1", "loopback"],
    ["127.255.0.9", "loopback"],
    ["::1", "loopback"],
    ["10.0.0.1", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.254", "private"],
    ["192.168.1.1", "private"],
    ["fc00::1", "private"],
    ["fd12:3456::1", "private"],
    ["169.254.169.254", "link-local"],
    ["fe80::1", "link-local"],
    ["100.64.0.1", "carrier-grade NAT"],
    ["100.127.255.254", "carrier-grade NAT"],
    ["224.0.0.1", "multicast"],
    ["ff02::1", "multicast"],
    ["255.255.255.255", "broadcast"],
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["::", "unspecified"],
    ["192.0.2.1", "reserved"],
    ["198.51.100.7", "reserved"],
    ["203.0.113.9", "reserved"],
    ["198.18.0.1", "reserved"],
    ["240.0.0.1", "reserved"],
    ["192.0.0.8", "reserved"],
    ["2001:db8::1", "reserved"],
    ["100::1", "reserved"],
    ["::ffff:169.254.169.254", "IPv4-embedding IPv6"],
    ["::ffff:a9fe:a9fe", "IPv4-embedding IPv6"],
    ["::ffff:8.8.8.8", "IPv4-embedding IPv6"],
    ["::127.0.0.1", "IPv4-embedding IPv6"],
    ["64:ff9b::7f00:1", "IPv4-embedding IPv6"],
    ["64:ff9b:1::a00:1", "IPv4-embedding IPv6"],
    ["2002:7f00:1::1", "IPv4-embedding IPv6"],
    ["2001::1", "IPv4-embedding IPv6"],
  ])("%s is %s", (address, kind) => {
    expect(classifyAddress(address)).toBe(kind);
  });

  it("is not an address for hostnames or non-canonical spellings (the URL parser normalises those first)", () => {
    for (const text of ["example.com", "2130706433", "0x7f000001", "127.1", ""]) expect(classifyAddress(text)).toBeUndefined();
  });
});

describe("webhook URLs of production platforms", () => {
  it.each([
    ["https://169.254.169.254/latest/meta-data/", "NON_PUBLIC_ADDRESS", "link-local"],
    ["https://[::ffff:169.254.169.254]/", "NON_PUBLIC_ADDRESS", "IPv4-embedding"],
    ["https://[::ffff:a9fe:a9fe]/", "NON_PUBLIC_ADDRESS", "IPv4-embedding"],
    ["https://2130706433/", "NON_PUBLIC_ADDRESS", "127.0.0.1 is loopback"],
    ["https://0x7f000001/", "NON_PUBLIC_ADDRESS", "127.0.0.1 is loopback"],
    ["https://0177.0.0.1/", "NON_PUBLIC_ADDRESS", "127.0.0.1 is loopback"],
    ["https://127.1/", "NON_PUBLIC_ADDRESS", "127.0.0.1 is loopback"],
    ["https://0x7f.0.0.1/", "NON_PUBLIC_ADDRESS", "127.0.0.1 is loopback"],
    ["https://127.0.0.1./", "NON_PUBLIC_ADDRESS", "loopback"],
    ["https://10.0.0.1/", "NON_PUBLIC_ADDRESS", "private"],
    ["https://192.168.1.1/", "NON_PUBLIC_ADDRESS", "private"],
    ["https://172.16.5.4:8443/x", "NON_PUBLIC_ADDRESS", "private"],
    ["https://100.64.0.1/", "NON_PUBLIC_ADDRESS", "carrier-grade NAT"],
    ["https://224.0.0.251/", "NON_PUBLIC_ADDRESS", "multicast"],
    ["https://255.255.255.255/", "NON_PUBLIC_ADDRESS", "broadcast"],
    ["https://0.0.0.0/", "NON_PUBLIC_ADDRESS", "unspecified"],
    ["https://0/", "NON_PUBLIC_ADDRESS", "unspecified"],
    ["https://192.0.2.10/", "NON_PUBLIC_ADDRESS", "reserved"],
    ["https://198.18.0.1/", "NON_PUBLIC_ADDRESS", "reserved"],
    ["https://[::1]/", "NON_PUBLIC_ADDRESS", "loopback"],
    ["https://[fe80::1]/", "NON_PUBLIC_ADDRESS", "link-local"],
    ["https://[fd00::1]/", "NON_PUBLIC_ADDRESS", "private"],
    ["https://[::]/", "NON_PUBLIC_ADDRESS", "unspecified"],
    ["https://[::127.0.0.1]/", "NON_PUBLIC_ADDRESS", "IPv4-embedding"],
    ["https://[64:ff9b::a9fe:a9fe]/", "NON_PUBLIC_ADDRESS", "IPv4-embedding"],
    ["https://[2002:a9fe:a9fe::1]/", "NON_PUBLIC_ADDRESS", "IPv4-embedding"],
    ["https://[2001:db8::1]/", "NON_PUBLIC_ADDRESS", "reserved"],
    ["http://127.0.0.1:5432", "NON_PUBLIC_ADDRESS", "loopback"],
    ["https://metadata.google.internal/computeMetadata/v1/", "INTERNAL_HOSTNAME", "metadata.google.internal"],
    ["https://metadata.google.internal./", "INTERNAL_HOSTNAME", "metadata.google.internal"],
    ["https://METADATA.Google.Internal/", "INTERNAL_HOSTNAME", "metadata.google.internal"],
    ["https://localhost/", "INTERNAL_HOSTNAME", "localhost"],
    ["https://localhost./", "INTERNAL_HOSTNAME", "localhost"],
    ["https://api.localhost/", "INTERNAL_HOSTNAME", "api.localhost"],
    ["https://metadata/", "INTERNAL_HOSTNAME", "metadata"],
    ["https://printer.local/", "INTERNAL_HOSTNAME", "printer.local"],
    ["https://redis.default.svc/", "INTERNAL_HOSTNAME", "redis.default.svc"],
    ["https://nas.home.arpa/", "INTERNAL_HOSTNAME", "nas.home.arpa"],
    ["http://hooks.example.com/x", "HTTPS_REQUIRED", "must use https"],
    ["http://localhost:3000/x", "INTERNAL_HOSTNAME", "localhost"],
    ["ftp://hooks.example.com/", "SCHEME_NOT_ALLOWED", "https"],
    ["https://user:pw@hooks.example.com/", "CREDENTIALS_NOT_ALLOWED", "credentials"],
    ["10.0.0.1", "URL_INVALID", "absolute URL"],
    ["192.168.1.1", "URL_INVALID", "absolute URL"],
    ["metadata.google.internal", "URL_INVALID", "absolute URL"],
  ])("refuses %s (%s)", (url, rule, says) => {
    expect(ruleOf(url, production)).toBe(rule);
    const reason = reasonOf(url, production);
    expect(reason).toContain(says);
    expect(reason).toContain(`rule ${rule}`);
  });

  it.each(["https://hooks.example.com/corridor", "https://8.8.8.8/h", "https://93.184.216.34:8443/x?y=1", "https://[2606:4700:4700::1111]/h", "https://api.stripe-like.io./h"])(
    "accepts %s",
    (url) => {
      expect(ruleOf(url, production)).toBeUndefined();
    },
  );

  it("never gets loopback from the operator's loopback switch (it is for sandbox platforms)", () => {
    const prod = targetPolicy("PRODUCTION", settings({ CORRIDOR_WEBHOOK_ALLOW_LOOPBACK: "true" }));
    expect(ruleOf("https://127.0.0.1/h", prod)).toBe("NON_PUBLIC_ADDRESS");
    expect(ruleOf("https://localhost/h", prod)).toBe("INTERNAL_HOSTNAME");
  });

  it("reaches ranges the operator allowlists, over https only", () => {
    const prod = targetPolicy("PRODUCTION", settings({ CORRIDOR_WEBHOOK_ALLOWED_RANGES: "10.20.0.0/16, fd00:1::/64" }));
    expect(ruleOf("https://10.20.3.4/h", prod)).toBeUndefined();
    expect(ruleOf("https://[fd00:1::5]/h", prod)).toBeUndefined();
    expect(ruleOf("https://10.21.0.1/h", prod)).toBe("NON_PUBLIC_ADDRESS");
    expect(ruleOf("http://10.20.3.4/h", prod)).toBe("HTTPS_REQUIRED");
  });

  it("refuses an allowlist entry that is not a CIDR range at startup", () => {
    expect(() => settings({ CORRIDOR_WEBHOOK_ALLOWED_RANGES: "10.0.0.0/8,not-a-range" })).toThrow(/not-a-range is not a CIDR range/);
  });
});

describe("webhook URLs of sandbox platforms", () => {
  it.each(["http://127.0.0.1:3000/h", "http://localhost:3000/h", "http://[::1]:8080/h", "https://localhost/h", "http://2130706433:3000/h"])(
    "accepts the loopback endpoint %s while the operator allows loopback",
    (url) => {
      expect(ruleOf(url, sandbox)).toBeUndefined();
    },
  );

  it.each([
    ["https://169.254.169.254/latest/meta-data/", "NON_PUBLIC_ADDRESS"],
    ["http://10.0.0.1/", "NON_PUBLIC_ADDRESS"],
    ["http://[::ffff:127.0.0.1]/", "NON_PUBLIC_ADDRESS"],
    ["https://metadata.google.internal/", "INTERNAL_HOSTNAME"],
    ["http://hooks.example.com/", "HTTPS_REQUIRED"],
  ])("still refuses %s", (url, rule) => {
    expect(ruleOf(url, sandbox)).toBe(rule);
  });

  it("refuses loopback when the operator turned it off", () => {
    expect(ruleOf("http://127.0.0.1:3000/h", sandboxNoLoopback)).toBe("NON_PUBLIC_ADDRESS");
    expect(ruleOf("https://localhost/h", sandboxNoLoopback)).toBe("INTERNAL_HOSTNAME");
    expect(ruleOf("https://hooks.example.com/h", sandboxNoLoopback)).toBeUndefined();
  });
});

describe("addresses a name resolves to", () => {
  const answers = (...list: string[]) => async () => list.map((address) => ({ address, family: (address.includes(":") ? 6 : 4) as 4 | 6 }));

  it("answers every address when all are public", async () => {
    await expect(checkedAddresses("hooks.example.com", production, answers("93.184.216.34", "2606:2800:220:1::1"))).resolves.toHaveLength(2);
  });

  it.each([["127.0.0.1"], ["10.1.2.3"], ["169.254.169.254"], ["::ffff:127.0.0.1"], ["fd00::1"]])("refuses a name with one answer %s among public ones", async (bad) => {
    const err = await checkedAddresses("hooks.example.com", production, answers("93.184.216.34", bad)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TargetRefusedError);
    expect((err as TargetRefusedError).problem.rule).toBe("NON_PUBLIC_ADDRESS");
    // The platform is told the kind, not the address its name resolved to.
    expect((err as Error).message).not.toContain(bad);
  });

  it("lets a sandbox name resolve to loopback only while the operator allows it", async () => {
    await expect(checkedAddresses("dev.example.com", sandbox, answers("127.0.0.1"))).resolves.toEqual([{ address: "127.0.0.1", family: 4 }]);
    await expect(checkedAddresses("dev.example.com", sandboxNoLoopback, answers("127.0.0.1"))).rejects.toBeInstanceOf(TargetRefusedError);
    await expect(checkedAddresses("dev.example.com", production, answers("::1"))).rejects.toBeInstanceOf(TargetRefusedError);
  });

  it("refuses a name with no address", async () => {
    await expect(checkedAddresses("nothing.example.com", production, answers())).rejects.toMatchObject({ code: "ENOTFOUND" });
  });
});
