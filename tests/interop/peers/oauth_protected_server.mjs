// Interop peer: an MCP server that only answers requests bearing an access token from a given authorization
// server, on the TypeScript SDK 1.x (@modelcontextprotocol/sdk 1.32.2: McpServer, a stateless
// StreamableHTTPServerTransport per request, its bearer-auth middleware and its protected resource metadata
// router), served by express on loopback. Prints its URL (http://127.0.0.1:PORT/mcp) as the first stdout line
// and exits when stdin closes.
//
//   node oauth_protected_server.mjs ISSUER
//
// ISSUER is the authorization server's issuer (oauth_authorization_server.mjs prints it). The protected resource
// metadata names it; a token is accepted when it is a JWT signed with a key of the issuer's JWKS, issued by
// it, for this server (its audience is this server's URL), unexpired, and carries the scope `mcp:tools`. One
// tool, `whoami`, answers with the token's subject and scopes: "subject duet-test-user scopes mcp:tools".
import express from 'express';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { getOAuthProtectedResourceMetadataUrl, mcpAuthMetadataRouter } from
  '@modelcontextprotocol/sdk/server/auth/router.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';

const issuer = process.argv[2];
if (!issuer || process.argv.length !== 3) {
  process.stderr.write('protected server: usage: node oauth_protected_server.mjs ISSUER\n');
  process.exit(2);
}
const requiredScope = 'mcp:tools';

const metadataAnswer = await fetch(`${issuer}/.well-known/openid-configuration`);
if (!metadataAnswer.ok) {
  process.stderr.write(`protected server: no metadata at ${issuer} (HTTP ${metadataAnswer.status})\n`);
  process.exit(1);
}
const oauthMetadata = await metadataAnswer.json();
const keys = createRemoteJWKSet(new URL(oauthMetadata.jwks_uri));

function build() {
  const server = new McpServer({ name: 'oauth-protected-server', version: '1.0.0' });
  server.registerTool('whoami', { description: "The access token's subject and scopes" }, async (extra) => ({
    content: [{
      type: 'text',
      text: `subject ${extra.authInfo?.extra?.subject} scopes ${extra.authInfo?.scopes.join(' ')}`,
    }],
  }));
  return server;
}

const app = express();
const listener = app.listen(0, '127.0.0.1', () => {
  const url = new URL(`http://127.0.0.1:${listener.address().port}/mcp`);
  const verifier = {
    async verifyAccessToken(token) {
      try {
        const { payload } = await jwtVerify(token, keys, { issuer, audience: url.href });
        return {
          token,
          clientId: payload.client_id,
          scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [],
          expiresAt: payload.exp,
          resource: url,
          extra: { subject: payload.sub },
        };
      } catch (error) {
        process.stderr.write(`protected server: token refused: ${error.message}\n`);
        throw new InvalidTokenError(`the token does not verify: ${error.message}`);
      }
    },
  };
  app.use(mcpAuthMetadataRouter({ oauthMetadata, resourceServerUrl: url, scopesSupported: [requiredScope] }));
  const auth = requireBearerAuth({
    verifier,
    requiredScopes: [requiredScope],
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(url),
    expectedResource: url,
  });
  app.post('/mcp', auth, express.json(), async (req, res) => {
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = build();
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no stream to open and no session to end, but only for a caller with a token.
  app.all('/mcp', auth, (_req, res) => {
    res.status(405).set('Allow', 'POST').json({
      jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null,
    });
  });
  process.stdout.write(`${url.href}\n`);
});

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
