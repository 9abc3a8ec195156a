import type { DescService } from "@bufbuild/protobuf";
import { createRouterTransport, type ConnectRouter, type ServiceImpl, type Transport } from "@connectrpc/connect";
import { appErrorInterceptor } from "../host/errors.js";

/**
 * An in-memory transport to a service's routes with the host's error mapping, as a handler test
 * needs it (an AppError thrown by the domain reaches the caller as the PublicError detail).
 */
export function serviceTransport(routes: (router: ConnectRouter) => void): Transport {
  return createRouterTransport(routes, { router: { interceptors: [appErrorInterceptor] } });
}

/** An in-memory fake of another service: the methods a test implements, with the host's error mapping. */
export function fakeService<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): Transport {
  return serviceTransport((router) => router.service(service, impl));
}
