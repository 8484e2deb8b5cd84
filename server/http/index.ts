// The HTTP layer's public surface: create the server, register routes of an area on it, and the types they use.

export { createHttpServer, DEFAULT_BODY_LIMIT } from './server.js';
export { renderError, reasonPhrase } from './envelopes.js';
export { isLoopbackAddress, isTransportSecure } from './transport.js';
export { Context, parseJsonBody } from './request.js';
export type { SocketHandle, WebSocketRoute } from './websocket.js';
export type {
  ServedRoute,
  Area,
  BodyMode,
  Handler,
  HttpServer,
  HttpServerOptions,
  ListenResult,
  Method,
  Reply,
  RequestContext,
  ResponseInfo,
  RouteOptions,
} from './types.js';
