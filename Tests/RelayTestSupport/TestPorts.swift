import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Ports for tests, none of which another test can take from under them.
//
// A port found free by binding port 0 and closing the socket again is free only for a moment:
// the system hands it to the next socket bound to port 0 (every fake binds one) or to the next
// outgoing connection, and with dozens of suites starting servers side by side one of them
// sometimes did. So:
// - a test that needs a port **nothing answers on** holds a socket bound to it and not
//   listening (`withRefusingLoopbackPort`): a connection to it is refused at once, and no other
//   socket can bind it while the test runs;
// - a **child process that binds a port of its own choosing** (PostgreSQL, Synapse, the speech
//   server) gets one from `reservedLoopbackPort()`: below the system's ephemeral range, so
//   neither a port-0 bind nor an outgoing connection is ever given it, and reserved by a lock
//   file that every test process respects;
// - everything of ours binds port 0 and reports the port it got: the fakes (`FakeServerHandle`)
//   and `rhea-relay serve` (`HTTP_PORT=0`: "serving on" names the port).

/// Runs `body` with a loopback port that refuses connections: a socket this process holds,
/// bound and not listening, closed when `body` returns.
public func withRefusingLoopbackPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let socket = try BoundSocket()
    defer { socket.release() }
    return try await body(socket.port)
}

/// Runs `body` with a loopback port that takes connections and never answers: a socket this
/// process holds, listening, that accepts nothing (the system completes a few handshakes for
/// it), as a server that hangs does. Closed when `body` returns.
public func withSilentLoopbackPort<T>(_ body: (Int) async throws -> T) async throws -> T {
    let socket = try BoundSocket()
    defer { socket.release() }
    guard listen(socket.fd, 16) == 0 else { throw UnusedPortError(reason: "listen() failed") }
    return try await body(socket.port)
}

/// A TCP socket bound to 127.0.0.1 on a port the system chose, not listening.
private struct BoundSocket {
    let fd: Int32
    let port: Int

    init(port requested: Int = 0) throws {
        #if canImport(Glibc)
            let stream = Int32(SOCK_STREAM.rawValue)
        #else
            let stream = SOCK_STREAM
        #endif
        let fd = socket(AF_INET, stream, 0)
        guard fd >= 0 else { throw UnusedPortError(reason: "socket() failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(requested).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else {
            close(fd)
            throw UnusedPortError(reason: "port \(requested) could not be bound on 127.0.0.1")
        }
        self.fd = fd
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }

    func release() {
        _ = close(fd)
    }
}

/// A loopback port for a child process to bind, reserved for this test process until it exits.
///
/// Ports come from `reservedRange`, below the system's ephemeral range (32768–60999 on Linux),
/// from which port-0 binds and outgoing connections take theirs; each is claimed by an
/// exclusive `flock` on `/tmp/rhea-relay-test-ports/<port>.lock`, which other test processes
/// (two `swift test` runs at once) respect and which the system drops when the process exits,
/// however it ends. The port is checked free by binding it before it is handed out. A run
/// reserves a few dozen of the 12 000.
public func reservedLoopbackPort() throws -> Int {
    try PortReservations.shared.reserve()
}

private final class PortReservations: Sendable {
    static let shared = PortReservations()
    static let reservedRange = 20_000...31_999
    static let folder = "/tmp/rhea-relay-test-ports"

    /// The lock files' descriptors, kept open (and so locked) until the process exits.
    private let held = Mutex([Int: Int32]())

    func reserve() throws -> Int {
        mkdir(Self.folder, 0o777)
        let range = Self.reservedRange
        let start = Int.random(in: range)
        for offset in 0..<range.count {
            let port = range.lowerBound + (start - range.lowerBound + offset) % range.count
            if held.withLock({ $0[port] != nil }) { continue }
            let lock = open("\(Self.folder)/\(port).lock", O_CREAT | O_RDWR | O_CLOEXEC, 0o666)
            guard lock >= 0 else { continue }
            guard flock(lock, LOCK_EX | LOCK_NB) == 0 else {
                close(lock)
                continue
            }
            // Something outside the tests may listen there: then it is not ours to hand out.
            guard let probe = try? BoundSocket(port: port) else {
                close(lock)
                continue
            }
            probe.release()
            held.withLock { $0[port] = lock }
            return port
        }
        throw UnusedPortError(reason: "every port in \(range) is reserved or in use")
    }
}

/// No port could be had.
public struct UnusedPortError: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "could not find a loopback port: \(reason)" }
}
