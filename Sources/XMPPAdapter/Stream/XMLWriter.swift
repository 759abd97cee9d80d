/// Elements written as XML for the stream: the one writer of what the relay sends, so every
/// text a model or a person wrote is written as character data and cannot end an element,
/// start one, or open a second stanza.
///
/// Text and attribute values are escaped (`&`, `<`, `>`, and quotes in attributes), and a
/// character XML 1.0 does not allow (a control character, a lone surrogate, U+FFFE) is left
/// out: a server ends the stream of a client that sends one.
extension XMLElement {
    /// The element and its children, as a child of the client's stream (whose namespace is
    /// `jabber:client`); an `xmlns` is written only where it differs from its parent's.
    var xml: String {
        var out = ""
        write(to: &out, parentNamespace: XMPPNamespace.client)
        return out
    }

    private func write(to out: inout String, parentNamespace: String?) {
        out += "<" + name
        if namespace != parentNamespace { out += " xmlns='" + XMLText.attribute(namespace) + "'" }
        for (key, value) in attributes.sorted(by: { $0.key < $1.key }) {
            out += " " + key + "='" + XMLText.attribute(value) + "'"
        }
        guard !children.isEmpty || !text.isEmpty else {
            out += "/>"
            return
        }
        out += ">" + XMLText.characterData(text)
        for child in children { child.write(to: &out, parentNamespace: namespace) }
        out += "</" + name + ">"
    }
}

enum XMLText {
    static func characterData(_ text: String) -> String { escaped(text, inAttribute: false) }

    static func attribute(_ text: String) -> String { escaped(text, inAttribute: true) }

    /// Scalar by scalar (a `Character` could hide a `<` under a combining mark).
    private static func escaped(_ text: String, inAttribute: Bool) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars where XMLStreamParser.isXMLCharacter(scalar) {
            switch scalar {
            case "&": out.append(contentsOf: "&amp;".unicodeScalars)
            case "<": out.append(contentsOf: "&lt;".unicodeScalars)
            case ">": out.append(contentsOf: "&gt;".unicodeScalars)
            case "'" where inAttribute: out.append(contentsOf: "&apos;".unicodeScalars)
            case "\"" where inAttribute: out.append(contentsOf: "&quot;".unicodeScalars)
            // A line break or tab in an attribute would be read back as a space.
            case "\n" where inAttribute: out.append(contentsOf: "&#10;".unicodeScalars)
            case "\r" where inAttribute: out.append(contentsOf: "&#13;".unicodeScalars)
            case "\t" where inAttribute: out.append(contentsOf: "&#9;".unicodeScalars)
            default: out.append(scalar)
            }
        }
        return String(out)
    }
}
