// Interop peer: the TypeScript SDK's MCP client with its own OAuth client (an OAuthClientProvider kept in
// memory) against a protected MCP server, the user's browser played headlessly. Duet's tests run it against
// `duet serve --auth-*` and the authorization server of oauth_authorization_server.mjs.
//
//   node oauth_sdk_client.mjs URL legacy|modern
//
// legacy: @modelcontextprotocol/sdk 1.32.2 (initialize). modern: @modelcontextprotocol/client 2.4.0 pinned to
// 2026-07-28. Either way the first connection meets the 401, the SDK discovers the authorization server from
// the protected resource metadata, registers a client dynamically and hands over an authorization URL; this
// program follows that URL with plain fetch and a cookie jar through the server's headless /interaction pages
// until a redirect points at the client's redirect URI, gives the SDK the callback's parameters (finishAuth),
// connects again and calls `whoami`. It prints one JSON line, {"era", "whoami", "authorized"}, and exits 0;
// non-zero on any failure, with the reason on stderr.
import * as legacySdk from '@modelcontextprotocol/sdk/client/index.js';
import * as legacyHttp from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as legacyAuth from '@modelcontextprotocol/sdk/client/auth.js';
import * as modernSdk from '@modelcontextprotocol/client';

const [url, era] = process.argv.slice(2);
if (!url || (era !== 'legacy' && era !== 'modern') || process.argv.length !== 4) {
  process.stderr.write('oauth sdk client: usage: node oauth_sdk_client.mjs URL legacy|modern\n');
  process.exit(2);
}

// Never listened on: the browser stops at the redirect to it and hands its query to the SDK.
const redirectUrl = 'http://127.0.0.1:9/oauth-sdk-client/callback';

// Everything the SDK asks its application to keep, for this one run.
class SdkRunProvider {
  constructor() {
    this.saved = {};
    this.authorizationUrl = undefined;
  }
  get redirectUrl() { return redirectUrl; }
  get clientMetadata() {
    return {
      client_name: 'duet oauth sdk client peer',
      redirect_uris: [redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    };
  }
  clientInformation() { return this.saved.client; }
  saveClientInformation(information) { this.saved.client = information; }
  tokens() { return this.saved.tokens; }
  saveTokens(tokens) { this.saved.tokens = tokens; }
  redirectToAuthorization(authorizationUrl) { this.authorizationUrl = new URL(authorizationUrl); }
  saveCodeVerifier(verifier) { this.saved.verifier = verifier; }
  // v2 keeps what it discovered across the redirect, to check the callback comes from the same server.
  saveDiscoveryState(state) { this.saved.discovery = state; }
  discoveryState() { return this.saved.discovery; }
  codeVerifier() {
    if (!this.saved.verifier) throw new Error('no code verifier saved');
    return this.saved.verifier;
  }
}

// The headless browser: follows redirects by hand, keeping cookies, until one leads to the redirect URI;
// returns that redirect's query.
async function browseToCallback(start) {
  const jar = new Map();
  let at = new URL(start);
  for (let hop = 0; hop < 12; ++hop) {
    if (at.href.startsWith(redirectUrl)) return at.searchParams;
    const cookie = [...jar].map(([name, value]) => `${name}=${value}`).join('; ');
    const answer = await fetch(at, { redirect: 'manual', headers: cookie ? { cookie } : {} });
    for (const line of answer.headers.getSetCookie()) {
      const pair = line.split(';')[0];
      const equals = pair.indexOf('=');
      if (equals < 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1);
      if (value === '' || /expires=[^;]*1970/i.test(line)) jar.delete(name);
      else jar.set(name, value);
    }
    const location = answer.headers.get('location');
    if (answer.status < 300 || answer.status > 399 || !location)
      throw new Error(`GET ${at.href} answered HTTP ${answer.status} without a redirect: ${await answer.text()}`);
    at = new URL(location, at);
  }
  throw new Error(`more than 12 redirects, the last to ${at.href}`);
}

const provider = new SdkRunProvider();
const sdk = era === 'legacy'
  ? { Client: legacySdk.Client, Transport: legacyHttp.StreamableHTTPClientTransport,
      Unauthorized: legacyAuth.UnauthorizedError, options: {} }
  : { Client: modernSdk.Client, Transport: modernSdk.StreamableHTTPClientTransport,
      Unauthorized: modernSdk.UnauthorizedError,
      options: { versionNegotiation: { mode: { pin: '2026-07-28' } } } };

function connection() {
  return {
    client: new sdk.Client({ name: 'duet-oauth-sdk-client', version: '1.0.0' }, sdk.options),
    transport: new sdk.Transport(new URL(url), { authProvider: provider }),
  };
}

try {
  let { client, transport } = connection();
  let authorized = false;
  try {
    await client.connect(transport);
  } catch (error) {
    if (!(error instanceof sdk.Unauthorized) || !provider.authorizationUrl) throw error;
    const callback = await browseToCallback(provider.authorizationUrl);
    if (callback.get('error'))
      throw new Error(`authorization refused: ${callback.get('error')} ${callback.get('error_description') ?? ''}`);
    // v1 takes the code; v2 the whole callback query (and checks RFC 9207's iss in it).
    await transport.finishAuth(era === 'legacy' ? callback.get('code') : callback);
    authorized = true;
    await client.close().catch(() => {});
    ({ client, transport } = connection());
    await client.connect(transport);
  }
  const result = await client.callTool({ name: 'whoami', arguments: {} });
  const seenEra = era === 'legacy' ? 'legacy' : client.getProtocolEra();
  process.stdout.write(`${JSON.stringify({ era: seenEra, whoami: result.content[0].text, authorized })}\n`);
  await client.close();
  process.exit(0);
} catch (error) {
  process.stderr.write(`oauth sdk client: ${error?.stack ?? error}\n`);
  process.exit(1);
}
