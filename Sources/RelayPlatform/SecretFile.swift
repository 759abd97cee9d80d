import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A file the relay reads a credential from — every `…File` secret, `api.keysFile`, the relay's
/// own `<store.path>.key` — is refused before its text is used unless it is its owner's: no
/// write bit for group or others (whoever can change it can change what the relay trusts: add a
/// key digest, swap a token), and no read bit for others (whoever reads it holds the credential).
///
/// The group may read: a Kubernetes secret mounted `defaultMode: 0440` with the pod's `fsGroup`
/// is read through the group. The mode is checked on the open file, so it is the mode of what is
/// read (a symbolic link's target, as Kubernetes mounts them), not of a name swapped in between.
public enum SecretFile {
    /// The file's text. `subject` starts every refusal and names the path (`api.keysFile
    /// (RHEA_API_KEYS_FILE) names /run/keys, which`); the refusals end with the command that fixes
    /// them.
    public static func read(_ path: String, subject: String) throws(ConfigurationError) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw ConfigurationError("\(subject) cannot be read.") }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ConfigurationError("\(subject) cannot be read.") }
        if let refusal = refusal(mode: UInt32(status.st_mode), subject: subject, path: path) { throw refusal }
        guard let data = try? handle.readToEnd() ?? Data(), let text = String(data: data, encoding: .utf8) else {
            throw ConfigurationError("\(subject) cannot be read.")
        }
        return text
    }

    /// Why a file of `mode` may not hold a secret, or nil when it may.
    static func refusal(mode: UInt32, subject: String, path: String) -> ConfigurationError? {
        let digits = String(mode & 0o7777, radix: 8)
        let octal = "mode " + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
        if mode & 0o022 != 0 {
            return ConfigurationError(
                "\(subject) can be written by group or others (\(octal)): whoever can change it can change what the relay trusts. Make it its owner's alone: chmod 600 \(path)"
            )
        }
        if mode & 0o004 != 0 {
            return ConfigurationError(
                "\(subject) can be read by other users (\(octal)), and it holds a credential. Make it its owner's alone: chmod 600 \(path)")
        }
        return nil
    }
}
