#ifndef RHEA_CRESOLV_H
#define RHEA_CRESOLV_H

#include <stdint.h>

/// One SRV record (RFC 2782): where a service is, and in which order to try it.
typedef struct {
    uint16_t priority;
    uint16_t weight;
    uint16_t port;
    /// The target host, a domain name without its final dot ("." alone: no service there).
    char target[256];
} rhea_srv_record;

/// Looks up the SRV records of `name` (`_xmpp-client._tcp.example.org`) through the system's
/// resolver (libresolv: /etc/resolv.conf, its timeouts and retries, TCP when the answer is
/// truncated), or through the one nameserver `server_ip`:`server_port` (an IPv4 address) when
/// `server_ip` is not NULL. Writes at most `capacity` records; returns how many, 0 when the name
/// has none, -1 when the lookup failed (no such name, no answer). Blocking: call it off the
/// event loop.
int rhea_srv_lookup(const char *name, const char *server_ip, int server_port, rhea_srv_record *records, int capacity);

#endif
