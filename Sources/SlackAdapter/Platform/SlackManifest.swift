import RelayPipeline

/// The Slack app manifest for this relay, with `publicURL` where Slack sends requests: what
/// `rhea-relay register slack --url URL` prints and `bots/slack/manifest.yaml` holds (for
/// `https://relay.example.com`; a test keeps the two the same).
enum SlackManifest {
    /// The URL the checked-in manifest uses.
    static let exampleURL = "https://relay.example.com"

    static func yaml(publicURL: String) -> String {
        let publicURL = publicURL.hasSuffix("/") ? String(publicURL.dropLast()) : publicURL
        return """
            # Slack app manifest for Rhea Relay (HTTP mode).
            # Create the app at https://api.slack.com/apps → "Create New App" → "From an app manifest",
            # and paste this file. Slack sends requests to \(publicURL); for another address, print
            # this again with `rhea-relay register slack --url https://your.server` (or edit it).
            # For Socket Mode (no public URL): set socket_mode_enabled: true and delete every `url` and
            # `request_url` line (see docs/slack.md).
            _metadata:
              major_version: 1
              minor_version: 1
            display_information:
              name: Rhea Relay
              description: Multi-model AI in your channels — translate, fix, summarize, fact-check with a tribunal.
              background_color: "#2c2d30"
            features:
              bot_user:
                display_name: Rhea Relay
                always_online: true
              slash_commands:
                - command: /translate
                  url: \(publicURL)/slack/commands
                  description: Translate text (or the message you reply to) into a language
                  usage_hint: "[lang] text — e.g. fr Good morning"
                  should_escape: false
                - command: /tribunal
                  url: \(publicURL)/slack/commands
                  description: Ask several models whether a claim is true; shows their agreement
                  usage_hint: "[--k 5] [--tier mid] claim"
                  should_escape: false
                - command: /chain
                  url: \(publicURL)/slack/commands
                  description: Save, list, show or delete your team's chains
                  usage_hint: "save NAME = input > grammar > rewrite:formal > output | list | show NAME | delete NAME"
                  should_escape: false
                - command: /run
                  url: \(publicURL)/slack/commands
                  description: Run a saved chain on text
                  usage_hint: "NAME text"
                  should_escape: false
                - command: /rhea
                  url: \(publicURL)/slack/commands
                  description: Any Rhea Relay command — /rhea help lists them
                  usage_hint: "fix text | summarize | explain text | help"
                  should_escape: false
                # Escaped: a person picked after `@` arrives as `<@U123|ann>`, who they are,
                # rather than as the plain text `@ann`.
                - command: /admin
                  url: \(publicURL)/slack/commands
                  description: Who administers this workspace's bot; admins grant and revoke the role
                  usage_hint: "| grant @person | revoke @person"
                  should_escape: true
            oauth_config:
              scopes:
                bot:
                  - commands            # the slash commands above
                  - chat:write          # replies (chat.postMessage, chat.update, chat.postEphemeral)
                  - app_mentions:read   # @Rhea Relay <command> in channels
                  - im:history          # commands sent as direct messages
                  - reactions:read      # the :mag: reaction runs a tribunal on a message
                  - users:read          # who is a workspace admin (channel settings, others' chains)
                  - channels:history    # ... and reads that message's text and its thread
                  - groups:history
                  - mpim:history
                  - files:read          # audio files shared with a mention, for their words (docs/voice.md)
            settings:
              event_subscriptions:
                request_url: \(publicURL)/slack/events
                bot_events:
                  - app_mention
                  - message.im
                  - reaction_added
              interactivity:
                is_enabled: true
                request_url: \(publicURL)/slack/interactive
              org_deploy_enabled: false
              socket_mode_enabled: false
              token_rotation_enabled: false
            """
    }
}
