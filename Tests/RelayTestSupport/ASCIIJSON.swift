/// JSON as platforms that escape what is not ASCII send it (Telegram's Bot API: `"\u0444"`, a
/// character outside the Basic Multilingual Plane as two escapes): the largest encoding a text
/// can have, for tests of body caps.
public enum ASCIIJSON {
    /// `json` (already valid JSON) with every scalar that is not ASCII written as `\uXXXX`. Such
    /// scalars only occur inside strings, where the escape means the same.
    public static func escaped(_ json: String) -> String {
        var out = ""
        out.reserveCapacity(json.utf8.count)
        for scalar in json.unicodeScalars {
            if scalar.isASCII {
                out.unicodeScalars.append(scalar)
            } else {
                for unit in String(scalar).utf16 {
                    let hex = String(unit, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
            }
        }
        return out
    }
}
