#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback TCP port that nothing listens on now: the kernel picks it for a socket bound to
/// port 0, and the socket is closed again. Tests use it to reach a server that is not there (a
/// connection to it is refused at once), or to start one of their own on it.
public func unusedLoopbackPort() throws -> Int {
    #if canImport(Glibc)
        let stream = Int32(SOCK_STREAM.rawValue)
    #else
        let stream = SOCK_STREAM
    #endif
    let fd = socket(AF_INET, stream, 0)
    guard fd >= 0 else { throw UnusedPortError(reason: "socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw UnusedPortError(reason: "no loopback port could be bound") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// No unused port could be found.
public struct UnusedPortError: Error, CustomStringConvertible {
    public let reason: String
    public var description: String { "could not find an unused loopback port: \(reason)" }
}
