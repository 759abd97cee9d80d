/// An XMPP address (RFC 7622): `localpart@domainpart/resourcepart`, the local part and the
/// resource optional. Kept as given (the domain lower-cased); compared bare where the relay
/// compares people (`bare`).
///
/// Refused: an empty domain, a part over 1 023 bytes, a local part holding any of `"&'/:<>@` or a
/// space (RFC 7622 §3.3.1), a control character anywhere.
struct JID: Sendable, Hashable, CustomStringConvertible {
    var local: String?
    var domain: String
    var resource: String?

    init?(_ text: some StringProtocol) {
        let text = String(text)
        guard !text.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        // The resource is everything after the first `/`; the local part ends at the first `@`
        // before it.
        let slash = text.firstIndex(of: "/")
        let head = slash.map { text[..<$0] } ?? text[...]
        resource = slash.map { String(text[text.index(after: $0)...]) }
        if let at = head.firstIndex(of: "@") {
            local = String(head[..<at])
            domain = String(head[head.index(after: at)...]).lowercased()
        } else {
            local = nil
            domain = String(head).lowercased()
        }
        if domain.hasSuffix(".") { domain.removeLast() }
        guard !domain.isEmpty, domain.utf8.count <= 1_023, !domain.contains("@") else { return nil }
        if let local {
            guard !local.isEmpty, local.utf8.count <= 1_023, !local.contains(where: { "\"&'/:<>@ ".contains($0) }) else { return nil }
        }
        if let resource {
            guard !resource.isEmpty, resource.utf8.count <= 1_023 else { return nil }
        }
    }

    init(local: String?, domain: String, resource: String? = nil) {
        self.local = local
        self.domain = domain
        self.resource = resource
    }

    /// Without the resource: the account, or the room.
    var bare: JID { JID(local: local, domain: domain) }

    /// With `resource` in place of its own (a room JID and an occupant's nick).
    func with(resource: String) -> JID { JID(local: local, domain: domain, resource: resource) }

    var description: String {
        (local.map { $0 + "@" } ?? "") + domain + (resource.map { "/" + $0 } ?? "")
    }
}
