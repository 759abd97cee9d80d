/// The namespaces the relay speaks (RFC 6120 and the XEPs it implements).
enum XMPPNamespace {
    static let client = "jabber:client"
    static let stream = XMLStreamParser.streamNamespace
    static let tls = "urn:ietf:params:xml:ns:xmpp-tls"
    static let sasl = "urn:ietf:params:xml:ns:xmpp-sasl"
    static let bind = "urn:ietf:params:xml:ns:xmpp-bind"
    static let session = "urn:ietf:params:xml:ns:xmpp-session"
    static let stanzas = "urn:ietf:params:xml:ns:xmpp-stanzas"
    static let streams = "urn:ietf:params:xml:ns:xmpp-streams"
    /// XEP-0199.
    static let ping = "urn:xmpp:ping"
    /// XEP-0030.
    static let discoInfo = "http://jabber.org/protocol/disco#info"
    /// XEP-0045.
    static let muc = "http://jabber.org/protocol/muc"
    static let mucUser = "http://jabber.org/protocol/muc#user"
    /// XEP-0308.
    static let correction = "urn:xmpp:message-correct:0"
    /// XEP-0461.
    static let reply = "urn:xmpp:reply:0"
    /// XEP-0203.
    static let delay = "urn:xmpp:delay"
    /// XEP-0359.
    static let stanzaID = "urn:xmpp:sid:0"
    /// XEP-0085: "composing", the typing indicator.
    static let chatStates = "http://jabber.org/protocol/chatstates"
    /// XEP-0334: a correction in flight is not worth keeping in the archive.
    static let hints = "urn:xmpp:hints"
}
