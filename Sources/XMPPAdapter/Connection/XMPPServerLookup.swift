import CResolv
import NIOPosix

/// Where an account's server is, when `XMPP_SERVER` does not say: the domain's SRV records —
/// `_xmpp-client._tcp` (STARTTLS, RFC 6120 §3.2.1) and `_xmpps-client._tcp` (direct TLS,
/// XEP-0368) — in the order RFC 2782 gives (by priority, then at random by weight), else the
/// domain itself on 5222 (RFC 6120 §3.2.2's fallback). A record whose target is "." says the
/// service is not offered there. Asked through the system's resolver (`CResolv`, libresolv),
/// off the event loop, at each connection: records change.
struct XMPPServerLookup: Sendable {
    /// A nameserver to ask instead of the system's (`XMPP_DNS_SERVER`, tests): an IPv4 address
    /// and a port.
    var nameserver: (host: String, port: Int)?

    struct Record: Sendable, Hashable {
        var priority: Int
        var weight: Int
        var port: Int
        var target: String
        var directTLS: Bool
    }

    /// The servers to try, in order.
    func servers(for domain: String) async -> [XMPPServer] {
        let direct = await records("_xmpps-client._tcp.\(domain)", directTLS: true)
        let starttls = await records("_xmpp-client._tcp.\(domain)", directTLS: false)
        var generator = SystemRandomNumberGenerator()
        return Self.order(direct + starttls, domain: domain, using: &generator)
    }

    /// RFC 2782's order of `records`, the usable ones; the domain on 5222 when there are none.
    static func order(_ records: [Record], domain: String, using generator: inout some RandomNumberGenerator) -> [XMPPServer] {
        let usable = records.filter { !$0.target.isEmpty && $0.target != "." && (1...65_535).contains($0.port) }
        guard !usable.isEmpty else {
            // Records that all say "not here" mean no server at all; no records, the domain.
            return records.isEmpty ? [XMPPServer(host: domain, port: 5222, directTLS: false)] : []
        }
        var ordered: [Record] = []
        for priority in Set(usable.map(\.priority)).sorted() {
            var group = usable.filter { $0.priority == priority }
            // Weight 0 first, so they are picked rarely (RFC 2782), then by running sums.
            group.sort { $0.weight < $1.weight }
            while !group.isEmpty {
                let total = group.reduce(0) { $0 + $1.weight }
                let pick = total == 0 ? 0 : Int.random(in: 0...total, using: &generator)
                var running = 0
                let index =
                    group.firstIndex { record in
                        running += record.weight
                        return running >= pick
                    } ?? 0
                ordered.append(group.remove(at: index))
            }
        }
        return ordered.map { XMPPServer(host: $0.target, port: $0.port, directTLS: $0.directTLS) }
    }

    private func records(_ name: String, directTLS: Bool) async -> [Record] {
        let nameserver = nameserver
        let found = try? await NIOThreadPool.singleton.runIfActive { () -> [Record] in
            var buffer = [rhea_srv_record](repeating: rhea_srv_record(), count: 32)
            let count = buffer.withUnsafeMutableBufferPointer { records in
                if let nameserver {
                    return rhea_srv_lookup(name, nameserver.host, Int32(nameserver.port), records.baseAddress, Int32(records.count))
                }
                return rhea_srv_lookup(name, nil, 0, records.baseAddress, Int32(records.count))
            }
            guard count > 0 else { return [] }
            return buffer.prefix(Int(count)).map { record in
                let target = withUnsafeBytes(of: record.target) { bytes in
                    String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                return Record(
                    priority: Int(record.priority), weight: Int(record.weight), port: Int(record.port), target: target, directTLS: directTLS)
            }
        }
        return found ?? []
    }
}
