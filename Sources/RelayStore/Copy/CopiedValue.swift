import RelayPipeline
import SQLiteNIO

/// A SQLite value on its way into PostgreSQL as JSON: numbers as JSON numbers (their shortest
/// exact form, so a date comes back to the last bit), text as strings, NULL as null.
enum CopiedValue: Encodable {
    case integer(Int64)
    case number(Double)
    case text(String)
    case null

    /// The value of `column`; a blob, which no table of the schema holds, is refused rather than
    /// copied as something else.
    init(_ data: SQLiteData, column: String, table: String) throws(StoreError) {
        switch data {
        case .integer(let value): self = .integer(Int64(value))
        case .float(let value): self = .number(value)
        case .text(let value): self = .text(value)
        case .null: self = .null
        case .blob: throw .operationFailed(operation: "copy \(table).\(column)", reason: "it holds a blob, which that column never holds")
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .integer(let value): try container.encode(value)
        // JSON has no infinities; PostgreSQL reads these words as double precision. (SQLite
        // stores no NaN: it keeps NULL instead.)
        case .number(let value) where value.isInfinite: try container.encode(value > 0 ? "Infinity" : "-Infinity")
        case .number(let value) where value.isNaN: try container.encodeNil()
        case .number(let value): try container.encode(value)
        case .text(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}
