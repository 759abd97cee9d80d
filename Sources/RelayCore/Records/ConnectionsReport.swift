public import struct Foundation.Date

/// What the console's connections page reads from the store: per platform, its replies'
/// latest activity and errors, and every lease with its holder.
public struct ConnectionsReport: Sendable, Hashable {
    public struct Activity: Sendable, Hashable {
        public var platform: String
        /// When its newest reply (or progress message) was queued: the last event it answered.
        public var lastQueued: Date?
        /// The newest delivery error of its replies, and when that reply was queued.
        public var lastError: String?
        public var lastErrorQueued: Date?
        /// Its replies waiting to be delivered.
        public var pending: Int

        public init(platform: String, lastQueued: Date?, lastError: String?, lastErrorQueued: Date?, pending: Int) {
            self.platform = platform
            self.lastQueued = lastQueued
            self.lastError = lastError
            self.lastErrorQueued = lastErrorQueued
            self.pending = pending
        }
    }

    /// A lease (a platform's connection, its delivery, the retention purges) and who holds it.
    public struct Lease: Sendable, Hashable {
        public var name: String
        /// The holder's replica name (`host/pid/random`); nil once released.
        public var holder: String?
        /// Until when; nil once released.
        public var expiresAt: Date?

        public init(name: String, holder: String?, expiresAt: Date?) {
            self.name = name
            self.holder = holder
            self.expiresAt = expiresAt
        }
    }

    public var activity: [Activity]
    public var leases: [Lease]

    public init(activity: [Activity], leases: [Lease]) {
        self.activity = activity
        self.leases = leases
    }
}
