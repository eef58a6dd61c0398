// bench peer: the smallest authorization server a protected `duet serve` needs for the auth group — an RSA key
// made for this run, its JWK Set at /jwks (cacheable for an hour), and one RS256 access token for the audience
// given, valid for a day with the scope `mcp`. Prints "JWKS_URL TOKEN" as its first stdout line.
//
//   node jwt-issuer.mjs --audience URL
import { createServer } from 'node:http';
import { generateKeyPairSync, sign } from 'node:crypto';

const at = process.argv.indexOf('--audience');
const audience = at > 0 ? process.argv[at + 1] : undefined;
if (!audience) {
    process.stderr.write('jwt-issuer: usage: node jwt-issuer.mjs --audience URL\n');
    process.exit(2);
}
const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'bench', alg: 'RS256', use: 'sig' };
const b64 = value => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

const server = createServer((req, res) => {
    if (req.url !== '/jwks') {
        res.writeHead(404).end();
        return;
    }
    res.writeHead(200, { 'Content-Type': 'application/jwk-set+json', 'Cache-Control': 'max-age=3600' });
    res.end(JSON.stringify({ keys: [jwk] }));
});
server.listen(0, '127.0.0.1', () => {
    const origin = `http://127.0.0.1:${server.address().port}`;
    const now = Math.floor(Date.now() / 1000);
    const input = `${b64({ alg: 'RS256', typ: 'at+jwt', kid: 'bench' })}.${b64({
        iss: origin, aud: audience, sub: 'bench-user', client_id: 'bench', scope: 'mcp', iat: now, exp: now + 86400
    })}`;
    const token = `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`;
    process.stdout.write(`${origin}/jwks ${token}\n`);
});
