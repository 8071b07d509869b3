/**
 * A host as a socket dials it and as a person reads it beside a port, the same in the host's
 * messages and the renderer's labels. An IPv6 address has colons of its own, so "::1:2222" could
 * be an address or an address and a port: beside a port it goes in brackets, as in a URL and in
 * OpenSSH ("[::1]:2222").
 */

/**
 * The host as a socket dials it: an IPv6 address without the brackets a person may write it in
 * ("[::1]" → "::1"). Node, ssh2, FreeRDP and the server's direct-tcpip all want the bare address;
 * with the brackets they look it up as a name, which does not resolve.
 */
export function hostToDial(host: string): string {
  return /^\[.*\]$/.test(host) ? host.slice(1, -1) : host;
}

/** A host as a URL (and "host:port") writes it: an IPv6 address in brackets, once, however it was saved. */
export function hostInUrl(host: string): string {
  const bare = hostToDial(host);
  return bare.includes(':') ? `[${bare}]` : bare;
}

/** "web01:22", "10.0.0.5:3389", "[::1]:2222": where a message says it connected or listened. */
export function hostAndPort(host: string, port: number | string): string {
  return `${hostInUrl(host)}:${port}`;
}

/**
 * A host as SSH host keys are looked up under it: lower case, as OpenSSH does (ssh.c lowercases
 * the host before it reads known_hosts, and a hashed entry hashes the lowercased name), so
 * "Web01.Example.com" and "web01.example.com" are one server, and "FE80::1" is "fe80::1". ASCII
 * letters only, as C's tolower() and SQLite's lower() fold (the migration that folded stored names
 * used lower()). Takes the host as dialled: brackets and port are the caller's (knownHostsName).
 */
export function sshHostKeyHost(host: string): string {
  return host.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * The name an SSH host key or an RDP certificate is trusted, looked up and forgotten under,
 * however a connection, a trust or a forget writes the host: as it is dialled ("[::1]" is "::1",
 * the address every connection dials) and without case (sshHostKeyHost), so "[::1]", "::1",
 * "Web01" and "web01" each name one server. Migration 007 made the names stored before so.
 */
export function hostKeyHost(host: string): string {
  return sshHostKeyHost(hostToDial(host));
}
