import Foundation
import RelayCore
import Testing

@Suite("JSON written by the relay")
struct JSONValueTests {
    @Test("Bodies are compact, with keys in order, and read back as they were")
    func compactSortedAndFaithful() throws {
        let value: JSONValue = [
            "z": 1, "a": [true, false, nil, 2.5, -7], "text": "line\nnext \"quoted\" back\\slash / tab\t\u{1}\u{1F}",
            "emoji": "👩‍👩‍👧 naïve \u{2028} <!channel>", "nested": ["b": "x", "B": "y", "": .object([:])], "empty": [],
        ]
        let bytes = try #require(value.serialized())
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"a":[true,false,null,2.5,-7],"emoji":"#))
        #expect(text.contains(#""nested":{"":{},"B":"y","b":"x"}"#))
        #expect(text.contains(#"\"quoted\" back\\slash / tab\t\u0001\u001f""#))
        #expect(!text.contains("\n"), "compact: no line breaks, even from the text")
        #expect(JSONValue.parse(bytes) == value)
        // Foundation reads it the same way.
        let foundation = try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any]
        #expect(foundation?["text"] as? String == "line\nnext \"quoted\" back\\slash / tab\t\u{1}\u{1F}")
    }

    @Test("A number JSON cannot express is refused, not written", arguments: [Double.nan, .infinity, -.infinity])
    func nonFiniteNumbers(number: Double) {
        let value: JSONValue = ["blocks": [["n": .double(number)]]]
        #expect(value.serialized() == nil)
        #expect(value.encoded() == Array("null".utf8))
    }
}
