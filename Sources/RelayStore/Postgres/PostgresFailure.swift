import NIOCore
import PostgresNIO
import RelayPipeline

/// Turns postgres-nio's errors into the store's. `PSQLError`'s own description hides everything
/// (to keep query values out of logs); the server's message and SQLSTATE are what an operator
/// needs, and carry no bound values.
enum PostgresFailure {
    /// The SQLSTATE the schema's functions raise when an outbox id is taken (message: the id).
    static let outboxIDTaken = "RR002"
    /// The SQLSTATE of a run's end whose inbox item is not this replica's (message: the id).
    static let leaseLost = "RR001"

    /// The server did not answer in time (it is down, restarting, or out of connections).
    struct TimedOut: Error, CustomStringConvertible {
        let after: Duration
        var description: String {
            let seconds = after.components.seconds
            let shown = seconds > 0 ? "\(seconds) s" : "\(after.components.attoseconds / 1_000_000_000_000_000) ms"
            return "PostgreSQL did not answer within \(shown) (it may be down or restarting)"
        }
    }

    /// The schema's CHECK constraints a caller's value can break, by the name PostgreSQL gives
    /// them, with the condition each one states.
    static let checks = ["outbox_attempts_check": "attempts >= 0", "outbox_parts_delivered_check": "parts_delivered >= 0"]

    static func storeError(_ error: any Error, operation: String) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == leaseLost, let id = error.serverInfo?[.message].flatMap({ Int64($0) }) {
            return .leaseLost(id: id)
        }
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == outboxIDTaken {
            let id = error.serverInfo?[.message] ?? ""
            return .operationFailed(operation: "enqueue outbox entry \(id)", reason: "an entry with this id already exists")
        }
        // A value the schema refuses (a negative attempt count) is told in the words SQLiteStore
        // and MemoryStore use: callers see one answer whatever the store.
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "23514",
            let condition = error.serverInfo?[.constraintName].flatMap({ checks[$0] })
        {
            return .operationFailed(operation: operation, reason: "CHECK constraint failed: \(condition)")
        }
        return .operationFailed(operation: operation, reason: reason(for: error))
    }

    /// Whether the server did not answer in time: no answer to the login within the deadline,
    /// or no connection taken within the connect timeout.
    static func isTimeout(_ error: any Error) -> Bool {
        if error is TimedOut { return true }
        guard let error = error as? PSQLError, error.code == .connectionError, case .connectTimeout? = error.underlying as? ChannelError else {
            return false
        }
        return true
    }

    /// A short reason: the server's message with its SQLSTATE, or what went wrong with the
    /// connection.
    static func reason(for error: any Error) -> String {
        if let error = error as? PSQLError, error.code == .connectionError, case .connectTimeout(let after)? = error.underlying as? ChannelError {
            return TimedOut(after: Duration.nanoseconds(after.nanoseconds)).description
        }
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let info = error.serverInfo, let message = info[.message] {
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return message + state
        }
        switch error.code {
        case .connectionError:
            let underlying = error.underlying.map { String(describing: $0) } ?? "no answer"
            return "the connection failed (\(underlying))"
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return "the connection to PostgreSQL closed (it may be restarting)"
        case .poolClosed:
            return "the store is shutting down"
        case .sslUnsupported:
            return "the server does not offer TLS, and sslmode=require asks for it (use sslmode=prefer or disable)"
        case .authMechanismRequiresPassword:
            return "the server asks for a password and STORE_URL has none"
        default:
            return "PostgreSQL client error \(error.code)"
        }
    }
}
