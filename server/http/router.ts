// Method + path routing over a segment trie: `:name` segments are parameters (URL-decoded on match), static
// segments win over parameters, and a trailing slash routes like the path without it (D1).

import type { Area, BodyMode, Handler, Method } from './types.js';
import type { CorsPolicy } from './cors.js';
import { decodePathSegment } from './unicode.js';

export interface Route {
  readonly method: Method;
  readonly pattern: string;
  readonly area: Area;
  readonly handler: Handler;
  readonly bodyMode: BodyMode;
  /** D43: who may read this route's responses from a browser. */
  readonly cors: CorsPolicy;
  readonly paramNames: readonly string[];
}

export type RouteMatch =
  | { readonly kind: 'found'; readonly route: Route; readonly params: Record<string, string> }
  /** `cors` is 'public' when any method of the path is (D43: an OPTIONS preflight is answered from this). */
  | { readonly kind: 'method-not-allowed'; readonly area: Area; readonly allowed: readonly string[]; readonly cors: CorsPolicy }
  /** D40: a parameter whose escapes are bytes that are not UTF-8 (`%ED%B0%80`); refused, never altered. */
  | { readonly kind: 'bad-parameter'; readonly area: Area; readonly name: string }
  | { readonly kind: 'not-found'; readonly area: Area };

class RouteNode {
  readonly statics = new Map<string, RouteNode>();
  param: RouteNode | undefined;
  readonly methods = new Map<string, Route>();
}

const NO_PARAMS: Record<string, string> = Object.freeze({}) as Record<string, string>;

/** Splits a path into its segments, ignoring one trailing slash (D1). `/` has no segments. */
function splitPath(path: string): string[] {
  let end = path.length;
  if (end > 1 && path.charCodeAt(end - 1) === 47 /* / */) end--;
  const trimmed = path.slice(1, end);
  return trimmed === '' ? [] : trimmed.split('/');
}

export class Router {
  private readonly root = new RouteNode();
  /** First path segment -> area of the first route registered under it: unknown paths answer in that envelope. */
  private readonly areaByPrefix = new Map<string, Area>();

  add(method: Method, pattern: string, area: Area, handler: Handler, bodyMode: BodyMode, cors: CorsPolicy = 'private'): Route {
    if (!pattern.startsWith('/')) throw new Error(`route pattern must start with "/": ${pattern}`);
    const segments = splitPath(pattern);
    const paramNames: string[] = [];
    let node = this.root;
    for (const segment of segments) {
      if (segment.startsWith(':')) {
        const name = segment.slice(1);
        if (name === '' || paramNames.includes(name)) throw new Error(`bad or repeated parameter in route ${pattern}`);
        paramNames.push(name);
        node.param ??= new RouteNode();
        node = node.param;
      } else {
        let next = node.statics.get(segment);
        if (next === undefined) {
          next = new RouteNode();
          node.statics.set(segment, next);
        }
        node = next;
      }
    }
    if (node.methods.has(method)) throw new Error(`route ${method} ${pattern} is registered twice`);
    const route: Route = { method, pattern, area, handler, bodyMode, cors, paramNames };
    node.methods.set(method, route);
    const first = segments[0];
    if (first !== undefined && !first.startsWith(':') && !this.areaByPrefix.has(first)) this.areaByPrefix.set(first, area);
    return route;
  }

  match(method: string, path: string): RouteMatch {
    const segments = splitPath(path);
    const values: string[] = [];
    const search: { found: Route | undefined; fallback: RouteNode | undefined } = { found: undefined, fallback: undefined };
    findRoute(this.root, segments, 0, method, values, search);
    if (search.found !== undefined) {
      const params = decodeParams(search.found.paramNames, values);
      if (typeof params === 'string') return { kind: 'bad-parameter', area: search.found.area, name: params };
      if (params !== undefined) return { kind: 'found', route: search.found, params };
    } else if (search.fallback !== undefined) {
      const allowed = [...search.fallback.methods.keys()].sort();
      const area = search.fallback.methods.values().next().value?.area ?? 'plain';
      const cors = [...search.fallback.methods.values()].some((route) => route.cors === 'public') ? 'public' : 'private';
      return { kind: 'method-not-allowed', area, allowed, cors };
    }
    return { kind: 'not-found', area: this.areaOf(segments[0]) };
  }

  /** Every route registered, in registration order within a path, paths depth-first (the OpenAPI document, D1). */
  routes(): Route[] {
    const out: Route[] = [];
    const visit = (node: RouteNode): void => {
      out.push(...node.methods.values());
      for (const child of node.statics.values()) visit(child);
      if (node.param !== undefined) visit(node.param);
    };
    visit(this.root);
    return out;
  }

  private areaOf(firstSegment: string | undefined): Area {
    return (firstSegment !== undefined && this.areaByPrefix.get(firstSegment)) || 'plain';
  }
}

/**
 * Depth-first, statics before parameters. Stops at the first node having `method`; remembers the first complete
 * node without it (for 405). `values` holds the parameter values along the found path.
 */
function findRoute(
  node: RouteNode,
  segments: readonly string[],
  index: number,
  method: string,
  values: string[],
  search: { found: Route | undefined; fallback: RouteNode | undefined },
): boolean {
  if (index === segments.length) {
    if (node.methods.size === 0) return false;
    const route = node.methods.get(method);
    if (route !== undefined) {
      search.found = route;
      return true;
    }
    search.fallback ??= node;
    return false;
  }
  const segment = segments[index] as string;
  const next = node.statics.get(segment);
  if (next !== undefined && findRoute(next, segments, index + 1, method, values, search)) return true;
  if (node.param !== undefined && segment !== '') {
    values.push(segment);
    if (findRoute(node.param, segments, index + 1, method, values, search)) return true;
    values.pop();
  }
  return false;
}

/**
 * URL-decodes parameter values; undefined when one has a malformed escape (the path then matches nothing), the
 * parameter's name when its escapes decode to bytes that are not UTF-8 (D40).
 */
function decodeParams(names: readonly string[], values: readonly string[]): Record<string, string> | string | undefined {
  if (names.length === 0) return NO_PARAMS;
  const params: Record<string, string> = {};
  for (let i = 0; i < names.length; i++) {
    const value = decodePathSegment(values[i] as string);
    if (value === 'malformed') return undefined;
    if (value === 'not-utf8') return names[i] as string;
    params[names[i] as string] = value;
  }
  return params;
}
