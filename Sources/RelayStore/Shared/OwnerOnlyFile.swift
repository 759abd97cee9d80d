#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Creates the relay's own files that others must not read — the SQLite store (history, the
/// ledger) and the key beside it — with mode 0600 whatever the process's umask.
///
/// The mode is given to open(2) and set again with fchmod(2): the umask can only take bits away,
/// and one that takes the owner's (0277) would leave a store its own process cannot write.
/// SQLite makes a database's `-wal` and `-shm` files with the database file's mode, so they
/// follow the file made here.
public enum OwnerOnlyFile {
    /// Creates `path` holding `contents`, mode 0600; false, touching nothing, when something is
    /// already there.
    @discardableResult
    public static func create(atPath path: String, contents: [UInt8] = []) throws(Failure) -> Bool {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            if errno == EEXIST { return false }
            throw Failure(code: errno)
        }
        defer { close(descriptor) }
        do throws(Failure) {
            guard fchmod(descriptor, 0o600) == 0 else { throw Failure(code: errno) }
            var written = 0
            while written < contents.count {
                let count = contents[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw Failure(code: errno) }
                written += count
            }
            guard contents.isEmpty || fsync(descriptor) == 0 else { throw Failure(code: errno) }
            return true
        } catch {
            // Half a key is worse than none: the next start would refuse it as too short.
            unlink(path)
            throw error
        }
    }

    /// Why a file could not be made, in the system's words (`Permission denied`).
    public struct Failure: Error, CustomStringConvertible {
        public let code: Int32
        public var description: String { String(cString: strerror(code)) }
    }
}
