import { PasskeyRejected, type PasskeyVerifier } from "../domain/wallet/ports.js";

/**
 * @simplewebauthn/server, loaded on the first ceremony: with its ASN.1 and X.509 dependencies it is
 * ~400 modules, the largest single piece of a start that no start-up step uses (issue 28, item 4:
 * a warm `npm start` in 3 s). A failed load is not kept: the next ceremony tries again.
 */
let library: Promise<typeof import("@simplewebauthn/server")> | undefined;
function webauthn(): Promise<typeof import("@simplewebauthn/server")> {
  library ??= import("@simplewebauthn/server").catch((err: unknown) => {
    library = undefined;
    throw err;
  });
  return library;
}

/**
 * WebAuthn ceremonies with @simplewebauthn/server against the relying party (rpId + allowed
 * origins) passed with each call: the platform's own, or the deployment's default. User verification is not required (user presence is): the session key is what
 * authorizes, and platforms differ in UV support.
 */
export function createPasskeyVerifier(): PasskeyVerifier {
  return {
    async verifyRegistration({ rp, challenge, attestation }) {
      const { verifyRegistrationResponse } = await webauthn();
      let result;
      try {
        result = await verifyRegistrationResponse({
          response: {
            id: attestation.credentialId,
            rawId: attestation.credentialId,
            type: "public-key",
            clientExtensionResults: {},
            response: {
              clientDataJSON: attestation.clientDataJson,
              attestationObject: attestation.attestationObject,
              transports: attestation.transports as never,
            },
          },
          expectedChallenge: challenge,
          expectedOrigin: rp.origins,
          expectedRPID: rp.rpId,
          requireUserVerification: false,
        });
      } catch (err) {
        throw new PasskeyRejected((err as Error).message);
      }
      if (!result.verified || !result.registrationInfo) throw new PasskeyRejected("the attestation did not verify");
      const { credential } = result.registrationInfo;
      if (credential.id !== attestation.credentialId) throw new PasskeyRejected("attestation.credentialId differs from the attested credential");
      return { credentialId: credential.id, publicKey: Buffer.from(credential.publicKey).toString("base64url"), counter: credential.counter };
    },

    async verifyAssertion({ rp, expectedChallenge, credential, assertion }) {
      const { verifyAuthenticationResponse } = await webauthn();
      let result;
      try {
        result = await verifyAuthenticationResponse({
          response: {
            id: assertion.credentialId,
            rawId: assertion.credentialId,
            type: "public-key",
            clientExtensionResults: {},
            response: {
              clientDataJSON: assertion.clientDataJson,
              authenticatorData: assertion.authenticatorData,
              signature: assertion.signature,
              userHandle: assertion.userHandle,
            },
          },
          expectedChallenge,
          expectedOrigin: rp.origins,
          expectedRPID: rp.rpId,
          credential: {
            id: credential.credentialId,
            publicKey: Uint8Array.from(Buffer.from(credential.publicKey, "base64url")),
            counter: credential.counter,
            transports: credential.transports as never,
          },
          requireUserVerification: false,
        });
      } catch (err) {
        throw new PasskeyRejected((err as Error).message);
      }
      if (!result.verified) throw new PasskeyRejected("the assertion did not verify");
      return { newCounter: result.authenticationInfo.newCounter };
    },
  };
}
