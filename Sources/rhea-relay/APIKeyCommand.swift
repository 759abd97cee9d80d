import ArgumentParser
import RheaAPI

/// `rhea-relay api-key new`: a fresh key for the served Rhea API, and the line that accepts it.
struct APIKeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "api-key", abstract: "Make keys for the served Rhea API (api.keysFile).", subcommands: [New.self])

    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a fresh API key (give it to the client) and its line for api.keysFile (the file keeps only the digest).")

        func run() {
            let key = APIKeyFile.newKey()
            // The key on stdout's first line, the file's line on the second: scripts can take either.
            print(key)
            print(APIKeyFile.line(for: key))
            writeErr(
                "The first line is the key: give it to the client (X-API-Key). Add the second line to the file api.keysFile names; the key itself is not kept anywhere."
            )
        }
    }
}
