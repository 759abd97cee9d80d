/// What ``StoreCopy`` copied: the rows of each table, in the order the tables were copied.
public struct StoreCopyReport: Sendable, Hashable {
    /// One table's count.
    public struct Table: Sendable, Hashable {
        public let name: String
        public let rows: Int
    }

    public internal(set) var tables: [Table] = []

    /// The rows copied into `table` (nil: not a copied table).
    public func rows(in table: String) -> Int? {
        tables.first { $0.name == table }?.rows
    }

    /// Every row copied.
    public var totalRows: Int { tables.reduce(0) { $0 + $1.rows } }
}
