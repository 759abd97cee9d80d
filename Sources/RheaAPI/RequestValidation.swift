import RelayCore

/// Reads a JSON request body the way the gateway's FastAPI models do, and reports every problem
/// at once in FastAPI's 422 shape (Pydantic v2's error types, messages, `loc`, `input`, `ctx`),
/// so a client written against the gateway reads our errors unchanged.
struct RequestValidation {
    private(set) var errors: [JSONValue] = []
    private let body: [String: JSONValue]

    /// Nil with the errors already recorded when the body is not a JSON object.
    static func reading(_ bytes: [UInt8]) -> (RequestValidation?, [JSONValue]) {
        guard !bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else {
            return (nil, [error("missing", loc: ["body"], msg: "Field required", input: .null)])
        }
        guard let value = JSONValue.parse(bytes) else {
            return (nil, [error("json_invalid", loc: ["body", 0], msg: "JSON decode error", input: [:], ctx: ["error": "Expecting value"])])
        }
        guard let object = value.objectValue else {
            return (
                nil,
                [
                    error(
                        "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from",
                        input: value)
                ]
            )
        }
        return (RequestValidation(body: object), [])
    }

    private init(body: [String: JSONValue]) {
        self.body = body
    }

    /// A string field; lengths count Unicode scalars, as Python does.
    mutating func string(_ name: String, default fallback: String? = nil, minLength: Int = 0, maxLength: Int? = nil) -> String {
        guard let value = body[name] else {
            if let fallback { return fallback }
            errors.append(Self.error("missing", loc: ["body", .string(name)], msg: "Field required", input: .object(body)))
            return ""
        }
        guard let text = value.stringValue else {
            errors.append(Self.error("string_type", loc: ["body", .string(name)], msg: "Input should be a valid string", input: value))
            return fallback ?? ""
        }
        let length = text.unicodeScalars.count
        if length < minLength {
            errors.append(
                Self.error(
                    "string_too_short", loc: ["body", .string(name)], msg: "String should have at least \(Self.characters(minLength))", input: value,
                    ctx: ["min_length": .int(minLength)]))
        } else if let maxLength, length > maxLength {
            errors.append(
                Self.error(
                    "string_too_long", loc: ["body", .string(name)], msg: "String should have at most \(Self.characters(maxLength))", input: value,
                    ctx: ["max_length": .int(maxLength)]))
        }
        return text
    }

    /// An integer field in `range`, read as Pydantic's lax mode reads one (`3`, `3.0`, `"3"`).
    mutating func int(_ name: String, default fallback: Int, in range: ClosedRange<Int>) -> Int {
        guard let value = body[name] else { return fallback }
        let loc: [JSONValue] = ["body", .string(name)]
        let number: Int
        switch value {
        case .int(let int): number = int
        case .bool(let bool): number = bool ? 1 : 0
        case .double(let double) where double.isFinite && double == double.rounded() && abs(double) < 1e15: number = Int(double)
        case .double:
            errors.append(Self.error("int_from_float", loc: loc, msg: "Input should be a valid integer, got a number with a fractional part", input: value))
            return fallback
        case .string(let text):
            guard let parsed = Int(text.trimmingCharacters(in: " \t\n\r")) else {
                errors.append(Self.error("int_parsing", loc: loc, msg: "Input should be a valid integer, unable to parse string as an integer", input: value))
                return fallback
            }
            number = parsed
        default:
            errors.append(Self.error("int_type", loc: loc, msg: "Input should be a valid integer", input: value))
            return fallback
        }
        if number < range.lowerBound {
            errors.append(
                Self.error(
                    "greater_than_equal", loc: loc, msg: "Input should be greater than or equal to \(range.lowerBound)", input: value,
                    ctx: ["ge": .int(range.lowerBound)]))
        } else if number > range.upperBound {
            errors.append(
                Self.error(
                    "less_than_equal", loc: loc, msg: "Input should be less than or equal to \(range.upperBound)", input: value,
                    ctx: ["le": .int(range.upperBound)]))
        }
        return number
    }

    private static func characters(_ count: Int) -> String {
        count == 1 ? "1 character" : "\(count) characters"
    }

    static func error(_ type: String, loc: [JSONValue], msg: String, input: JSONValue, ctx: [String: JSONValue]? = nil) -> JSONValue {
        var error: [String: JSONValue] = ["type": .string(type), "loc": .array(loc), "msg": .string(msg), "input": input]
        if let ctx { error["ctx"] = .object(ctx) }
        return .object(error)
    }
}
