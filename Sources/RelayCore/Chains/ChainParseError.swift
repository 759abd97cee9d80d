/// Why a chain's DSL was refused: which block, which column (1-based, in characters), what was expected.
public struct ChainParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based block number, 0 when the error concerns the chain as a whole.
    public var block: Int
    public var column: Int
    public var message: String

    public init(block: Int, column: Int, message: String) {
        self.block = block
        self.column = column
        self.message = message
    }

    public var description: String {
        block == 0 ? message : "Block \(block) at column \(column): \(message)"
    }
}
