import Foundation
import NIOCore
import NIOPosix
import RelayPlatform

/// Binds the configured address once, and lets it go, before anything else starts: a port in
/// use or a host that is not this machine's is then one clear line and exit 2, said before
/// "serving on" and before the store is opened (the server itself binds a moment later; a port
/// taken in between still fails there, with NIO's words).
enum ListenCheck {
    static func probe(host: String, port: Int) async throws(ConfigurationError) {
        // Port 0 asks the system for any free port: nothing to check.
        guard port != 0 else { return }
        let channel: any Channel
        do {
            channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .bind(host: host, port: port).get()
        } catch {
            throw refusal(error, host: host, port: port)
        }
        try? await channel.close()
    }

    /// What to change, by what the system said.
    static func refusal(_ error: any Error, host: String, port: Int) -> ConfigurationError {
        if let error = error as? IOError {
            switch error.errnoCode {
            case EADDRINUSE:
                return ConfigurationError(
                    "port \(port) on \(host) is already in use (HTTP_PORT, http.port): stop what listens there, or set HTTP_PORT to a free port.")
            case EACCES:
                return ConfigurationError(
                    "port \(port) on \(host) needs privileges this process does not have (HTTP_PORT, http.port): use a port above 1023, and a proxy in front for 80 or 443."
                )
            case EADDRNOTAVAIL:
                return ConfigurationError(
                    "HTTP_HOST (http.host) is \(host), which is not an address of this machine: use 127.0.0.1 (this machine only), 0.0.0.0 (every interface) or one of its own addresses."
                )
            default:
                break
            }
        }
        if error is SocketAddressError || error is SocketAddressError.UnknownHost {
            return ConfigurationError(
                "HTTP_HOST (http.host) is \(host), which cannot be resolved to an address: use 127.0.0.1, 0.0.0.0 or a name this machine resolves.")
        }
        return ConfigurationError("cannot listen on \(host):\(port) (HTTP_HOST, HTTP_PORT): \(error)")
    }
}
