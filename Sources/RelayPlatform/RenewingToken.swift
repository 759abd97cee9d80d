public import Foundation
public import RelayCore

/// A platform's token for its own API (the Bot Connector's, the Chat API's), got by a grant and
/// kept until shortly before it expires: one grant an hour, not one per reply. Replies that need
/// a token while one is being fetched wait for that one (single flight); a token the API refused
/// is forgotten, so the next call fetches another.
public actor RenewingToken<Token: Sendable, Failure: Error> {
    /// A token is fetched again this long before it expires.
    public static var renewBefore: Duration { .seconds(5 * 60) }

    private let clock: any RelayClock
    private let grant: @Sendable (Date) async -> Result<(token: Token, lifetime: Duration), Failure>
    private var current: (token: Token, renewAt: Date)?
    private var fetching: Task<Result<(token: Token, lifetime: Duration), Failure>, Never>?

    /// `grant` asks for a token at the given time and returns it with how long it lasts.
    public init(clock: any RelayClock, grant: @escaping @Sendable (Date) async -> Result<(token: Token, lifetime: Duration), Failure>) {
        self.clock = clock
        self.grant = grant
    }

    /// A token good for at least `renewBefore` (or half its life, when that is shorter).
    public func token() async throws(Failure) -> Token {
        if let current, clock.now < current.renewAt { return current.token }
        let task: Task<Result<(token: Token, lifetime: Duration), Failure>, Never>
        if let fetching {
            task = fetching
        } else {
            task = Task { [grant, clock] in await grant(clock.now) }
            fetching = task
        }
        let asked = clock.now
        let result = await task.value
        fetching = nil
        switch result {
        case .success(let granted):
            current = (granted.token, Self.renewAt(asked, lifetime: granted.lifetime))
            return granted.token
        case .failure(let error):
            throw error
        }
    }

    /// Forgets the token (the API refused it): the next call fetches another.
    public func forget() {
        current = nil
    }

    /// When a token granted at `now` for `lifetime` is fetched again: `renewBefore` ahead of its
    /// expiry, or halfway through a short-lived one.
    public static func renewAt(_ now: Date, lifetime: Duration) -> Date {
        now + (lifetime > renewBefore * 2 ? lifetime - renewBefore : lifetime / 2)
    }
}
