import RelayCore

/// Pydantic-style body validation, answering 422 bodies shaped as in contract §1.5:
/// `{"detail": [{"type", "loc": ["body", field], "msg", "input", "ctx"}]}`.
enum FakeRheaValidation {
    /// A rule for one body field.
    enum Rule {
        case string(minLength: Int, maxLength: Int, required: Bool)
        case int(min: Int, max: Int)
    }

    static let quick: [(String, Rule)] = [
        ("text", .string(minLength: 1, maxLength: 5000, required: true)),
        ("action", .string(minLength: 0, maxLength: .max, required: false)),
        ("target_lang", .string(minLength: 0, maxLength: .max, required: false)),
        ("style", .string(minLength: 0, maxLength: .max, required: false)),
    ]

    static let dialog: [(String, Rule)] = [
        ("text", .string(minLength: 1, maxLength: 5000, required: true)),
        ("sender", .string(minLength: 0, maxLength: .max, required: false)),
    ]

    static let tribunal: [(String, Rule)] = [
        ("prompt", .string(minLength: 1, maxLength: 10000, required: true)),
        ("k", .int(min: 2, max: 10)),
        ("tier", .string(minLength: 0, maxLength: .max, required: false)),
        ("mode", .string(minLength: 0, maxLength: .max, required: false)),
        ("system", .string(minLength: 0, maxLength: 2000, required: false)),
    ]

    /// The 422 error items for `body`; empty when it is valid.
    static func errors(in body: JSONValue?, rules: [(String, Rule)]) -> [JSONValue] {
        guard let body else {
            return [
                [
                    "type": "json_invalid", "loc": ["body", 0], "msg": "JSON decode error",
                    "input": .object([:]), "ctx": ["error": "Expecting value"],
                ]
            ]
        }
        guard let members = body.objectValue else {
            return [
                [
                    "type": "model_attributes_type", "loc": ["body"],
                    "msg": "Input should be a valid dictionary or object to extract fields from", "input": body,
                ]
            ]
        }
        var errors: [JSONValue] = []
        for (field, rule) in rules {
            let location: JSONValue = ["body", .string(field)]
            let value = members[field]
            switch rule {
            case .string(let minLength, let maxLength, let required):
                guard let value, !value.isNull else {
                    if required {
                        errors.append(["type": "missing", "loc": location, "msg": "Field required", "input": body])
                    }
                    continue
                }
                guard let text = value.stringValue else {
                    errors.append([
                        "type": "string_type", "loc": location, "msg": "Input should be a valid string",
                        "input": value,
                    ])
                    continue
                }
                // Python's len() counts code points.
                let length = text.unicodeScalars.count
                if length < minLength {
                    errors.append([
                        "type": "string_too_short", "loc": location,
                        "msg": .string("String should have at least \(minLength) character\(minLength == 1 ? "" : "s")"),
                        "input": value, "ctx": ["min_length": .int(minLength)],
                    ])
                } else if length > maxLength {
                    errors.append([
                        "type": "string_too_long", "loc": location,
                        "msg": .string("String should have at most \(maxLength) characters"),
                        "input": value, "ctx": ["max_length": .int(maxLength)],
                    ])
                }
            case .int(let minimum, let maximum):
                guard let value, !value.isNull else { continue }
                guard let number = value.intValue else {
                    errors.append([
                        "type": "int_parsing", "loc": location,
                        "msg": "Input should be a valid integer, unable to parse string as an integer", "input": value,
                    ])
                    continue
                }
                if number < minimum {
                    errors.append([
                        "type": "greater_than_equal", "loc": location,
                        "msg": .string("Input should be greater than or equal to \(minimum)"),
                        "input": .int(number), "ctx": ["ge": .int(minimum)],
                    ])
                } else if number > maximum {
                    errors.append([
                        "type": "less_than_equal", "loc": location,
                        "msg": .string("Input should be less than or equal to \(maximum)"),
                        "input": .int(number), "ctx": ["le": .int(maximum)],
                    ])
                }
            }
        }
        return errors
    }
}
