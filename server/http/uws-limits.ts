// Evaluated before uWebSockets.js loads (see uws.ts): uWS reads UWS_HTTP_MAX_HEADERS_SIZE once, when its native
// module loads, and answers a larger request head itself with a bare HTML 431 (no envelope, no X-Request-Id, D44).
// We raise uWS's limit well above ours so that the layer sees the head and answers it in the area's envelope.

/** The head size (request line and headers, in bytes) the layer accepts; larger heads get 431 in the envelope. */
export const HEAD_LIMIT = 16 * 1024;

/** uWS's own limit; only heads past it still get uWS's HTML 431 (the layer never sees them). */
export const UWS_HEAD_LIMIT = 64 * 1024;

// An operator's explicit setting is kept (it must stay above HEAD_LIMIT for every head to be answered by us).
process.env['UWS_HTTP_MAX_HEADERS_SIZE'] ??= String(UWS_HEAD_LIMIT);
