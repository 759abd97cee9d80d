public import Foundation
public import Logging
public import RelayCore
import Synchronization

/// Which platforms refuse the relay's credentials right now, as their connections and the
/// start-up check find out: `/readyz` reports each with its reason and is not ready while one
/// lasts (docs/serving.md, "Readiness"). A refused token does not fix itself, so a platform that
/// keeps retrying (the token may be replaced while the relay runs) must not look healthy while
/// it does.
public final class CredentialRefusals: Sendable {
    /// One refusal: of which credential (its variable), what the platform said, since when.
    public struct Refusal: Sendable, Hashable {
        public var credential: String
        public var reason: String
        public var since: Date

        public init(credential: String, reason: String, since: Date) {
            self.credential = credential
            self.reason = reason
            self.since = since
        }
    }

    /// A platform and one of its credentials (Slack's bot token and app token are refused or
    /// taken apart).
    fileprivate struct Key: Hashable {
        var platform: String
        var credential: String
    }

    fileprivate struct Entry {
        var refusal: Refusal
        var logged: Date
    }

    private let entries = Mutex<[Key: Entry]>([:])

    /// How often a refusal that lasts is logged again: at once, then once a minute, so the log
    /// says it plainly without a line per retry.
    public static let logInterval: Duration = .seconds(60)

    public init() {}

    /// The refusals now, by platform, oldest first.
    public var current: [String: [Refusal]] {
        entries.withLock { entries in
            Dictionary(grouping: entries, by: \.key.platform).mapValues { $0.map(\.value.refusal).sorted { $0.since < $1.since } }
        }
    }

    /// The reporter a platform's connections use, labelled with its name.
    public func reporter(platform: String, clock: any RelayClock, logger: Logger) -> CredentialReporter {
        CredentialReporter(platform: platform, refusals: self, clock: clock, logger: logger)
    }

    /// Records a refusal; true when it should be logged now (the first time, or a minute after
    /// the last line).
    fileprivate func refuse(_ key: Key, reason: String, at now: Date) -> Bool {
        entries.withLock { entries in
            guard var entry = entries[key] else {
                entries[key] = Entry(refusal: Refusal(credential: key.credential, reason: reason, since: now), logged: now)
                return true
            }
            entry.refusal.reason = reason
            let due = now >= entry.logged + Self.logInterval
            if due { entry.logged = now }
            entries[key] = entry
            return due
        }
    }

    /// Clears a refusal; the one cleared, if there was one.
    fileprivate func accept(_ key: Key) -> Refusal? {
        entries.withLock { $0.removeValue(forKey: key)?.refusal }
    }
}

/// What one platform's connections tell `CredentialRefusals`: the platform refused a credential
/// (a Telegram 401, Discord's close code 4004, Matrix's `M_UNKNOWN_TOKEN`, Slack's
/// `invalid_auth`, Mattermost's refused websocket challenge), or took it.
public struct CredentialReporter: Sendable {
    public let platform: String
    let refusals: CredentialRefusals
    let clock: any RelayClock
    let logger: Logger

    /// A reporter on a board of its own, for code that runs a platform's client outside `serve`.
    public static func detached(platform: String, clock: any RelayClock = SystemClock(), logger: Logger) -> CredentialReporter {
        CredentialRefusals().reporter(platform: platform, clock: clock, logger: logger)
    }

    /// The platform refused `credential` (its variable, `TELEGRAM_BOT_TOKEN`), saying `reason`:
    /// recorded for `/readyz`, and logged as an error at once and then once a minute while it
    /// lasts.
    public func refused(_ credential: String, reason: String) {
        guard refusals.refuse(.init(platform: platform, credential: credential), reason: reason, at: clock.now) else { return }
        logger.error(
            "\(platform): refused \(credential); /readyz says not ready until it is taken", metadata: ["reason": "\(reason)"])
    }

    /// The platform took `credential`: a refusal of it recorded before is over.
    public func accepted(_ credential: String) {
        guard let refusal = refusals.accept(.init(platform: platform, credential: credential)) else { return }
        logger.notice("\(platform): \(credential) is taken again", metadata: ["refused_since": "\(refusal.since)"])
    }
}
