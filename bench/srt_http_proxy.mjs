// srt's HTTP proxy server alone, for compare_proxy.sh: the very module `srt` runs on the host
// (dist/sandbox/http-proxy.js, createHttpProxyServer), started on 127.0.0.1 without the socat
// bridges and the mux front-end that a sandboxed command's traffic also crosses. This is the
// most favourable measurement of srt's proxy: the same client code as paddock's row talks to it
// directly over TCP, with a proxy credential, as paddock's row does.
//   node srt_http_proxy.mjs PACKAGE_DIR TOKEN ALLOWED_HOST
// Prints the port on stdout, then serves until killed. The filter allows ALLOWED_HOST only (srt's
// own allowlist check runs once per tunnel, so it plays no part in the bytes per second).
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const [pkg, token, allowed] = process.argv.slice(2);
const { createHttpProxyServer } = await import(
  pathToFileURL(join(pkg, 'dist', 'sandbox', 'http-proxy.js')).href
);
const server = createHttpProxyServer({
  filter: async (_port, host) => host === allowed,
  proxyAuthToken: token,
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
