// docs/API.md is the OpenAPI document as prose, generated so the two never disagree: `npm run docs` writes it, and
// test/e2e/openapi.test.ts fails when the committed file is not what this renders.

import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServedRoute } from '../http/index.js';
import { packageVersion } from '../version.js';
import { buildOpenApiDocument, OPERATIONS } from './document.js';

type Schema = Record<string, unknown>;
type Operation = {
  summary: string;
  description: string;
  tags: string[];
  parameters?: { name: string; in: string; required: boolean; description: string; schema: Schema }[];
  requestBody?: { required: boolean; content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Schema }> }>;
  'x-websocket'?: boolean;
};

const INTRO = `# audience HTTP API

Generated from the OpenAPI 3.1 document the server serves at \`GET /openapi.json\` (\`npm run docs\` rewrites this
file; a test fails when it is stale). The contract behind it: the spec (\`../shared/spec/audience-data-service.md\`)
and the decisions D1–D47 cited below.

- **Keys** (D5–D8): a UUID v4 in the \`X-API-Key\` header or the \`k\` query parameter. *public* keys may track and
  read events, create users, identify and segment; everything else needs a *private* key, which travels only over
  HTTPS or from loopback (or behind \`--trust-proxy\`). No key: 401 2004; not a UUID: 401 2005; unknown: 401 2000;
  not allowed: 403 2001. Another organization's resources, or ones the key cannot see, are 404 3000.
- **Every response** carries \`X-Request-Id\` (a client's own UUID is kept, D44). Bodies are JSON (D1); timestamps
  are UTC ISO 8601 with milliseconds (D3). A trailing slash routes like the path without it.
- **Errors** come in the envelope of their area: \`CohortError\` (cohorts, segmentation, reactions, admin, plain),
  \`IdentityError\` (identity and events; the events read of an unknown user is the flat \`UnknownUserError\`, HTTP
  400 code 3002) and \`TaxonomyError\` (\`{requestId, error: {c, d}}\`). \`docs\` links to \`/errors/{status}/{code}\`.
  Codes: 1000 bad query parameter, 1002 body not as expected (the cause names the JSON path), 1003 body missing, 1007
  event does not fit its schema, 2000/2001/2004/2005 keys, 3000 not found, 3002 unknown user, 4000 exists or still
  referenced, 5000 unexpected.
- **CORS** (D43): routes a public key may call answer any origin by default; others only \`--cors-origins\`.
- **Legacy address** (D47): with \`serve --legacy-port N\` the Identity and Events routes are also served, alone, on
  a second address (the spec's \`{legacy_base_url}\`).
`;

function typeOf(schema: Schema | undefined): string {
  if (schema === undefined) return '';
  if (typeof schema.$ref === 'string') return `[${schema.$ref.split('/').pop()}](#${String(schema.$ref.split('/').pop()).toLowerCase()})`;
  if (Array.isArray(schema.allOf)) return (schema.allOf as Schema[]).map(typeOf).join(' + ');
  if (Array.isArray(schema.oneOf)) return (schema.oneOf as Schema[]).map(typeOf).join(' or ');
  if (schema.type === 'array') return `array of ${typeOf(schema.items as Schema)}`;
  if ('const' in schema) return `\`${JSON.stringify(schema.const)}\``;
  const type = Array.isArray(schema.type) ? (schema.type as string[]).join(' or ') : String(schema.type ?? 'any');
  const enumText = Array.isArray(schema.enum) ? ` (${(schema.enum as unknown[]).map((v) => `\`${String(v)}\``).join(', ')})` : '';
  const format = typeof schema.format === 'string' ? ` (${schema.format})` : '';
  if (type === 'object' && schema.properties !== undefined && schema.$ref === undefined) return `object {${Object.keys(schema.properties as object).join(', ')}}`;
  return type + format + enumText;
}

const cell = (text: string): string => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function propertiesTable(schema: Schema): string[] {
  const properties = schema.properties as Record<string, Schema> | undefined;
  if (properties === undefined) return [];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return [
    '| Field | Type | Required | Notes |',
    '|---|---|---|---|',
    ...Object.entries(properties).map(([name, property]) => `| \`${name}\` | ${cell(typeOf(property))} | ${required.has(name) ? 'yes' : ''} | ${cell(String(property.description ?? ''))} |`),
    '',
  ];
}

function operationText(method: string, path: string, operation: Operation): string[] {
  const lines = [`### ${method.toUpperCase()} ${path}${operation['x-websocket'] === true ? ' (WebSocket)' : ''}`, '', `**${operation.summary}.** ${operation.description.replace(/\n\n/g, ' ')}`, ''];
  if (operation.parameters !== undefined) {
    lines.push('| Parameter | In | Type | Required | Notes |', '|---|---|---|---|---|');
    for (const p of operation.parameters) lines.push(`| \`${p.name}\` | ${p.in} | ${cell(typeOf(p.schema))} | ${p.required ? 'yes' : ''} | ${cell(p.description)} |`);
    lines.push('');
  }
  if (operation.requestBody !== undefined) {
    const schema = operation.requestBody.content['application/json']?.schema;
    lines.push(`Body${operation.requestBody.required ? ' (required)' : ''}: ${typeOf(schema)}`, '');
    if (schema !== undefined) lines.push(...propertiesTable(schema));
  }
  lines.push('Responses:', '');
  for (const [status, response] of Object.entries(operation.responses)) {
    const content = Object.entries(response.content ?? {})[0];
    lines.push(`- **${status}** ${response.description}${content === undefined ? '' : `: ${content[0] === 'application/json' ? '' : `\`${content[0]}\` `}${typeOf(content[1].schema)}`}`);
  }
  lines.push('');
  return lines;
}

export function renderApiMarkdown(doc: Record<string, unknown>): string {
  const paths = doc.paths as Record<string, Record<string, Operation>>;
  const tags = doc.tags as { name: string; description: string }[];
  const lines = [INTRO];
  for (const tag of tags) {
    lines.push(`## ${tag.name}`, '', tag.description, '');
    for (const [path, methods] of Object.entries(paths)) {
      for (const [method, operation] of Object.entries(methods)) if (operation.tags.includes(tag.name)) lines.push(...operationText(method, path, operation));
    }
  }
  lines.push('## Schemas', '');
  for (const [name, schema] of Object.entries((doc.components as { schemas: Record<string, Schema> }).schemas)) {
    lines.push(`### ${name}`, '');
    if (typeof schema.description === 'string') lines.push(schema.description, '');
    const table = propertiesTable(schema);
    lines.push(...(table.length > 0 ? table : [`${typeOf(schema)}`, '']));
  }
  return lines.join('\n').replace(/\n{3,}/g, '\n\n').trimEnd() + '\n';
}

/** The document of a server serving every route (metrics on), as docs/API.md shows it. */
export function fullApiMarkdown(): string {
  const served: ServedRoute[] = Object.keys(OPERATIONS).map((id) => {
    const [method, pattern] = id.split(' ') as [ServedRoute['method'], string];
    return { method, pattern, area: OPERATIONS[id]?.area ?? 'plain', websocket: OPERATIONS[id]?.extensions?.['x-websocket'] === true };
  });
  return renderApiMarkdown(buildOpenApiDocument(served, { version: packageVersion() }));
}

// `node dist/server/openapi/markdown.js FILE` (npm run docs) writes it.
if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1] && process.argv[2] !== undefined) {
  writeFileSync(process.argv[2], fullApiMarkdown());
}
