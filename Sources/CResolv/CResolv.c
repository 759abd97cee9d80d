#include "CResolv.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netinet/in.h>
#include <resolv.h>
#include <string.h>

// The system's resolver does the DNS (the query, retries, a truncated answer again over TCP);
// this reads the answer's SRV records out of it. No package of the stack looks up SRV records.
int rhea_srv_lookup(const char *name, const char *server_ip, int server_port, rhea_srv_record *records, int capacity) {
    struct __res_state state;
    memset(&state, 0, sizeof state);
    if (res_ninit(&state) != 0) return -1;
    if (server_ip != NULL) {
        struct sockaddr_in address;
        memset(&address, 0, sizeof address);
        address.sin_family = AF_INET;
        address.sin_port = htons((uint16_t)server_port);
        if (inet_pton(AF_INET, server_ip, &address.sin_addr) != 1) {
            res_nclose(&state);
            return -1;
        }
        state.nsaddr_list[0] = address;
        state.nscount = 1;
    }
    state.retrans = 2;
    state.retry = 2;
    unsigned char answer[8192];
    int length = res_nquery(&state, name, ns_c_in, ns_t_srv, answer, sizeof answer);
    if (length < 0) {
        res_nclose(&state);
        return -1;
    }
    ns_msg message;
    if (ns_initparse(answer, length, &message) != 0) {
        res_nclose(&state);
        return -1;
    }
    int found = 0;
    int count = ns_msg_count(message, ns_s_an);
    for (int index = 0; index < count && found < capacity; index++) {
        ns_rr record;
        if (ns_parserr(&message, ns_s_an, index, &record) != 0) continue;
        if (ns_rr_type(record) != ns_t_srv || ns_rr_rdlen(record) < 7) continue;
        const unsigned char *data = ns_rr_rdata(record);
        rhea_srv_record *out = &records[found];
        out->priority = ns_get16(data);
        out->weight = ns_get16(data + 2);
        out->port = ns_get16(data + 4);
        if (dn_expand(ns_msg_base(message), ns_msg_end(message), data + 6, out->target, sizeof out->target) < 0) continue;
        found++;
    }
    res_nclose(&state);
    return found;
}
