// Interop peer: a real OAuth 2.1 authorization server (oidc-provider 9) for Duet's end-to-end login tests, on
// loopback. Its issuer is http://127.0.0.1:PORT, printed as the first stdout line; it exits when stdin closes.
//
//   node oauth_authorization_server.mjs [--port N] [--access-token-ttl SECONDS] [--log FILE] [--deny]
//
// What the MCP authorization spec asks of an authorization server, each as oidc-provider does it: PKCE with
// S256 for every client, dynamic client registration (native clients on loopback redirects, any port),
// resource indicators (RFC 8707: JWT access tokens whose audience is the MCP server, carrying its one scope
// `mcp:tools`), refresh tokens for `offline_access` (rotated on use), RFC 9207's `iss` in every authorization
// response. Access tokens live --access-token-ttl seconds (3 by default) so a test sees them expire.
//
// There is no login page: the interaction URL (/interaction/UID) logs in the fixed account `duet-test-user`
// and grants what the client asked for, or with --deny the user declines at the consent step, each answered
// with the redirect a browser would follow. A test plays the browser with plain GETs and a cookie jar.
//
// --log FILE gets one line per event a test may check: "grant authorization_code", "grant refresh_token",
// "registered CLIENT_ID", "denied".
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Provider, { errors } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';

const usage = 'usage: [--port N] [--access-token-ttl SECONDS] [--log FILE] [--deny]';
const options = { port: 0, ttl: 3, log: undefined, deny: false };
for (let i = 2; i < process.argv.length; ++i) {
  const name = process.argv[i];
  const value = process.argv[i + 1];
  if (name === '--deny') {
    options.deny = true;
  } else if (name === '--port' && value !== undefined) {
    options.port = Number(value);
    ++i;
  } else if (name === '--access-token-ttl' && value !== undefined) {
    options.ttl = Number(value);
    ++i;
  } else if (name === '--log' && value !== undefined) {
    options.log = value;
    ++i;
  } else {
    process.stderr.write(`authorization server: unknown argument "${name}" (${usage})\n`);
    process.exit(2);
  }
}

function log(line) {
  process.stderr.write(`authorization server: ${line}\n`);
  if (options.log)
    appendFileSync(options.log, `${line}\n`);
}

// The MCP server's scope: the only one a token for it can carry.
const resourceScope = 'mcp:tools';
const testAccount = 'duet-test-user';

const listener = createServer();
listener.listen(options.port, '127.0.0.1', async () => {
  const issuer = `http://127.0.0.1:${listener.address().port}`;
  // A signing key of this run's own, so no development key (and its warning) is ever used.
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'duet-e2e', alg: 'RS256', use: 'sig' };

  const provider = new Provider(issuer, {
    jwks: { keys: [signingKey] },
    cookies: { keys: ['duet-e2e-cookies'] },
    findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
    pkce: { required: () => true },
    // The resource scope too: a client may register with the scopes it will ask for (the TypeScript SDK
    // does), and registration accepts only scopes listed here.
    scopes: ['openid', 'offline_access', resourceScope],
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // A refresh that names no resource gets a token for the one the grant was for.
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resourceIndicator) => {
          const url = new URL(resourceIndicator);
          if (url.hostname !== '127.0.0.1' || url.protocol !== 'http:')
            throw new errors.InvalidTarget('this authorization server serves only MCP servers on 127.0.0.1');
          return {
            scope: resourceScope,
            audience: resourceIndicator,
            accessTokenTTL: options.ttl,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    // Public clients get a new refresh token on every use (oidc-provider's default rotation, said here).
    rotateRefreshToken: true,
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
  });
  provider.on('grant.success', (ctx) => log(`grant ${ctx.oidc.params.grant_type}`));
  provider.on('grant.error', (_ctx, error) => log(`grant error ${error.message} (${error.error_description ?? ''})`));
  provider.on('registration_create.success', (_ctx, client) => log(`registered ${client.clientId}`));
  provider.on('authorization.error', (_ctx, error) =>
    log(`authorization error ${error.message} (${error.error_description ?? ''})`));
  provider.on('server_error', (_ctx, error) => log(`server error ${error.stack}`));

  // The headless user: logs in, then consents to what is missing (or declines with --deny).
  async function interact(req, res) {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params, session } = details;
    if (prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: testAccount } },
        { mergeWithLastSubmission: false });
      return;
    }
    if (prompt.name !== 'consent')
      throw new Error(`no headless answer to the prompt "${prompt.name}"`);
    if (options.deny) {
      log('denied');
      await provider.interactionFinished(req, res, {
        error: 'access_denied',
        error_description: 'the test user declined to authorize this client',
      }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope)
      grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims)
      grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {}))
      grant.addResourceScope(indicator, scopes.join(' '));
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  }

  const callback = provider.callback();
  listener.on('request', (req, res) => {
    if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
      interact(req, res).catch((error) => {
        log(`interaction error ${error.message}`);
        res.statusCode = 400;
        res.setHeader('Content-Type', 'text/plain');
        res.end(`interaction failed: ${error.message}\n`);
      });
      return;
    }
    callback(req, res);
  });
  process.stdout.write(`${issuer}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
