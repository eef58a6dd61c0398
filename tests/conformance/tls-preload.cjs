// Preloaded into the conformance suite's Node by `run-server-suite --tls` (NODE_OPTIONS=--require), with
// DUET_CONFORMANCE_TLS_URL set to the HTTPS server's URL.
//
// Two scenarios of the pinned suite (http-header-validation, http-custom-header-server-validation) send their
// raw requests with node:http's request({hostname, port, path, ...}) whatever the scheme of the server URL:
// against an HTTPS server that is plain HTTP to a TLS port, which Duet answers 400 ("speaks HTTPS only")
// before any MCP header is read. This sends exactly those requests, the ones naming the host and port of
// DUET_CONFORMANCE_TLS_URL, through node:https's request instead, with the same options, headers and body,
// verified against the CA of NODE_EXTRA_CA_CERTS like every other request of the suite. Nothing else changes:
// a request with a URL or an agent of its own, or to any other host or port, goes as the suite sent it.
'use strict';

const http = require('node:http');
const https = require('node:https');

const given = process.env.DUET_CONFORMANCE_TLS_URL;
if (given) {
  const target = new URL(given);
  if (target.protocol !== 'https:') throw new Error(`tls-preload: ${given} is not an https:// URL`);
  const port = target.port || '443';
  const plainRequest = http.request;
  http.request = function request(options, ...rest) {
    const toTarget =
      options !== null && typeof options === 'object' && !(options instanceof URL) &&
      options.agent === undefined && options.protocol === undefined &&
      options.hostname === target.hostname && String(options.port) === port;
    return toTarget ? https.request(options, ...rest) : plainRequest.call(this, options, ...rest);
  };
}
