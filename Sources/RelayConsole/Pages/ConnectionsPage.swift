import Foundation
import RelayCore
import RelayPipeline

/// Connections (docs/console.md): each platform's state, which replica holds each of its
/// leases (its connection, its delivery), its last reply queued and last delivery error, and
/// the outbox's depth. The relay's, not one team's: every team's admin sees the same.
struct ConnectionsPage {
    let relay: Relay
    /// Each configured platform's state in words.
    let states: [String: String]
    let now: Date

    func body() async throws -> TrustedHTML {
        let report = try await relay.store.connectionsReport()
        let platforms = Set(states.keys).union(report.activity.map(\.platform)).sorted()
        let rows = platforms.map { platform in
            let activity = report.activity.first { $0.platform == platform }
            // A platform's leases are named after it (`telegram.delivery`, `discord.gateway`).
            let leases = report.leases.filter { $0.name.hasPrefix(platform + ".") }.map { lease in
                let held = lease.holder != nil && (lease.expiresAt.map { $0 > now } ?? false)
                return LeaseRow(
                    name: lease.name, holder: held ? lease.holder ?? "" : "nobody (free)",
                    until: held ? lease.expiresAt.map(ConsoleDates.time) ?? "" : "")
            }
            return ConnectionRow(
                platform: platform, state: states[platform] ?? "not configured here", leases: leases, hasLeases: !leases.isEmpty,
                lastQueued: activity?.lastQueued.map(ConsoleDates.time) ?? "none kept", lastError: activity?.lastError ?? "none",
                lastErrorQueued: activity?.lastErrorQueued.map(ConsoleDates.time), pending: activity?.pending ?? 0)
        }
        let others = report.leases.filter { lease in !platforms.contains { lease.name.hasPrefix($0 + ".") } }.map { lease in
            LeaseRow(name: lease.name, holder: lease.holder ?? "nobody (free)", until: lease.expiresAt.map(ConsoleDates.time) ?? "")
        }
        let values = ConnectionsValues(
            rows: rows, depth: report.activity.reduce(0) { $0 + $1.pending }, otherLeases: others, hasOtherLeases: !others.isEmpty)
        return TrustedHTML(html: ConsoleTemplates.render("connections", values))
    }
}

struct ConnectionsValues {
    var rows: [ConnectionRow]
    var depth: Int
    var otherLeases: [LeaseRow]
    var hasOtherLeases: Bool
}

struct ConnectionRow {
    var platform: String
    var state: String
    var leases: [LeaseRow]
    var hasLeases: Bool
    var lastQueued: String
    var lastError: String
    var lastErrorQueued: String?
    var pending: Int
}

struct LeaseRow {
    var name: String
    var holder: String
    var until: String
}
