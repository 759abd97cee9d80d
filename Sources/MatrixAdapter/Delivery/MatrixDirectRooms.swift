import Logging
import RelayPlatform
import Synchronization

/// The bot's direct rooms, one per person, where private results go: read from the account's
/// `m.direct` data (which clients read too, so the room shows as a direct chat), made when a
/// person has none, and kept in memory once known.
final class MatrixDirectRooms: Sendable {
    let api: any MatrixAPI
    let identity: MatrixIdentity
    private let known = Mutex<[String: String]>([:])

    init(api: any MatrixAPI, identity: MatrixIdentity) {
        self.api = api
        self.identity = identity
    }

    /// Whether `room` is the bot's direct room with `user`: asked of the homeserver only until
    /// that room is known, not for every private answer.
    func isDirect(_ room: String, with user: String) async throws(MatrixAPIError) -> Bool {
        if let direct = known.withLock({ $0[user] }) { return direct == room }
        guard let me = await identity.current()?.user else { throw .unreachable(endpoint: "whoami", reason: "the bot's user id is not known yet") }
        return try await api.directRooms(of: me)[user]?.contains(room) == true
    }

    /// The direct room with `user`, made (with `user` invited) when there is none.
    func room(with user: String) async throws(MatrixAPIError) -> String {
        if let room = known.withLock({ $0[user] }) { return room }
        guard let me = await identity.current()?.user else { throw .unreachable(endpoint: "whoami", reason: "the bot's user id is not known yet") }
        var rooms = try await api.directRooms(of: me)
        if let room = rooms[user]?.last {
            known.withLock { $0[user] = room }
            return room
        }
        let room = try await api.createDirectRoom(with: user)
        rooms[user, default: []].append(room)
        // Kept before it is written: should the write fail, this process still uses the room.
        known.withLock { $0[user] = room }
        try await api.setDirectRooms(rooms, of: me)
        return room
    }
}
