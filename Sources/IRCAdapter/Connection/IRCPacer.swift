import RelayCore
import Synchronization

import struct Foundation.Date

/// Keeps what the relay sends under IRC servers' flood limits, so it is never disconnected for
/// flooding (docs/irc.md).
///
/// ngIRCd (26.1, its defaults) reads at most 3 commands of a client per pass and about 256 bytes a
/// second (`COMMAND_LEN / 2`) before it holds the client back a second; it stops reading a
/// client whose unread input passes 512 bytes, so it throttles rather than disconnects. Solanum
/// (Libera.Chat, OFTC's kind) takes a burst of 5 lines, then one a second, and disconnects
/// ("Excess Flood") a client with 20 lines waiting. So a line costs a second, or its bytes at
/// 256 a second when longer (a 400-byte line, 1.6 s), and 4 seconds' worth may go at once: a
/// burst of 4 short lines, then one a second — under both.
///
/// The pacer keeps one time: when everything sent so far is paid for. A line may go once that
/// time, the line's own cost included, is at most `burst` ahead of now.
///
/// A server that exempts the bot from its flood limits (an oper-set mode, a services exemption)
/// takes more: `IRC_LINES_PER_SECOND` divides every cost and the burst by its value (1 by
/// default, the limits above).
final class IRCPacer: Sendable {
    /// A delivery's confirmation (`PING`) at the default pace: small, but a command all the same.
    static let confirmationCost: Duration = .milliseconds(500)

    private let paidUntil = Mutex<Date?>(nil)
    /// Lines a second, as `IRC_LINES_PER_SECOND` says.
    let rate: Double
    let burst: Duration

    init(linesPerSecond: Double = 1) {
        rate = linesPerSecond.isFinite && linesPerSecond > 0 ? linesPerSecond : 1
        burst = .seconds(4 / rate)
    }

    func cost(ofLineBytes bytes: Int) -> Duration { max(.seconds(1), .milliseconds(bytes * 1_000 / 256)) / rate }

    var confirmationCost: Duration { Self.confirmationCost / rate }

    /// Takes a line's `cost` and says how long to wait before sending it.
    func reserve(_ cost: Duration, now: Date) -> Duration {
        paidUntil.withLock { paid in
            // The line goes once everything up to and including it fits in the burst.
            let end = max(paid ?? now, now) + cost
            paid = end
            let start = end - burst
            return start > now ? start.duration(since: now) : .zero
        }
    }

    /// How long until a short line could go without waiting; nothing is taken.
    func wait(now: Date) -> Duration {
        paidUntil.withLock { paid in
            guard let paid else { return .zero }
            let start = paid + cost(ofLineBytes: 0) - burst
            return start > now ? start.duration(since: now) : .zero
        }
    }
}
