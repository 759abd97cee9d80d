public import Foundation
public import RelayCore

/// The keys a platform publishes for checking the tokens it signs its requests with (the Bot
/// Framework's OpenID key set, Google's map of certificates), fetched when first needed and
/// kept, by the same rules on every platform:
///
/// - a token whose key id is not among them fetches them again, **at most once a minute**
///   (`refetchInterval`): a flood of made-up ids costs one fetch a minute, never one a request;
/// - keys older than `maxAge` (a day) are fetched again at the next token, so a rotation is
///   followed without a restart even when no unknown id comes first;
/// - one fetch at a time: tokens that arrive while it runs wait for it;
/// - a failed fetch keeps the keys already known.
///
/// `Keys` is what a platform checks signatures with (a jwt-kit key collection and what else its
/// key set says of each key); `fetch` returns it with the ids it holds.
public actor PublishedKeys<Keys: Sendable> {
    /// What one fetch found.
    public struct Fetched: Sendable {
        public var keys: Keys
        public var ids: Set<String>

        public init(keys: Keys, ids: Set<String>) {
            self.keys = keys
            self.ids = ids
        }
    }

    /// What a token's key id finds.
    public enum Lookup: Sendable {
        case found(Keys)
        /// Not among the keys, even after fetching them again (or within a minute of a fetch).
        case unknown
        /// The keys could not be fetched, and none are known: why, in one line without a URL.
        case unavailable(reason: String)
    }

    public static var refetchInterval: Duration { .seconds(60) }
    public static var maxAge: Duration { .seconds(24 * 3600) }

    private let clock: any RelayClock
    private let fetch: @Sendable () async -> Result<Fetched, KeyFetchFailure>
    private var known: (fetched: Fetched, at: Date)?
    private var lastAttempt: Date?
    private var fetching: Task<Result<Fetched, KeyFetchFailure>, Never>?

    public init(clock: any RelayClock, fetch: @escaping @Sendable () async -> Result<Fetched, KeyFetchFailure>) {
        self.clock = clock
        self.fetch = fetch
    }

    /// The keys, when they hold `kid`, fetching them again first when the rules above allow.
    public func lookUp(kid: String) async -> Lookup {
        let now = clock.now
        if let known, known.fetched.ids.contains(kid), now.timeIntervalSince(known.at) < Self.maxAge.seconds {
            return .found(known.fetched.keys)
        }
        let mayFetch = lastAttempt.map { now.timeIntervalSince($0) >= Self.refetchInterval.seconds } ?? true
        if mayFetch || fetching != nil {
            switch await refresh() {
            case .success(let fetched): known = (fetched, clock.now)
            case .failure(let failure) where known == nil: return .unavailable(reason: failure.reason)
            case .failure: break
            }
        }
        guard let known, known.fetched.ids.contains(kid) else { return .unknown }
        return .found(known.fetched.keys)
    }

    private func refresh() async -> Result<Fetched, KeyFetchFailure> {
        if let fetching { return await fetching.value }
        lastAttempt = clock.now
        let task = Task { [fetch] in await fetch() }
        fetching = task
        let result = await task.value
        fetching = nil
        return result
    }
}

/// Why a platform's published keys could not be fetched: one line, never a URL.
public struct KeyFetchFailure: Error, Sendable, Hashable {
    public let reason: String

    public init(_ reason: String) {
        self.reason = reason
    }
}
