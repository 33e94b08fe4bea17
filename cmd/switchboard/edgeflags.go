package main

import (
	"github.com/spf13/pflag"

	"github.com/switchboardhq/switchboard/app"
)

// edgeFlags registers the serve flags of the security knobs: one allow-private flag
// per kind of outbound fetch, the media retention, store and bound, the
// download of received media and the operator token.
func edgeFlags(fs *pflag.FlagSet, cfg *app.Config) {
	fs.BoolVar(&cfg.LinkPreviewAllowPrivate, "linkpreview-allow-private", cfg.LinkPreviewAllowPrivate, "let link previews fetch private addresses (env SWITCHBOARD_LINKPREVIEW_ALLOW_PRIVATE)")
	fs.BoolVar(&cfg.MediaAllowPrivate, "media-allow-private", cfg.MediaAllowPrivate, "let mediaUrl point at private addresses (env SWITCHBOARD_MEDIA_ALLOW_PRIVATE)")
	fs.DurationVar(&cfg.MediaRetention, "media-retention", cfg.MediaRetention, "how long uploaded media are served (env SWITCHBOARD_MEDIA_RETENTION)")
	fs.StringVar(&cfg.MediaURL, "media-url", cfg.MediaURL, "where media bytes live: db: or s3://bucket/prefix?endpoint=host:port (env SWITCHBOARD_MEDIA_URL)")
	fs.Int64Var(&cfg.MediaMaxBytes, "media-max-bytes", cfg.MediaMaxBytes, "bound of one stored media file, 0 for 100 MiB (env SWITCHBOARD_MEDIA_MAX_BYTES)")
	fs.StringVar(&cfg.MediaDownload, "media-download", cfg.MediaDownload, "which received attachments are downloaded on arrival: all or none (env SWITCHBOARD_MEDIA_DOWNLOAD)")
	fs.Int64Var(&cfg.MediaDownloadMax, "media-download-max", cfg.MediaDownloadMax, "largest received attachment downloaded on arrival, in bytes; 0: the media store's bound (env SWITCHBOARD_MEDIA_DOWNLOAD_MAX)")
	fs.DurationVar(&cfg.MediaRetryWait, "media-retry-wait", cfg.MediaRetryWait, "how long the gateway waits for a sender's phone to upload expired media again (env SWITCHBOARD_MEDIA_RETRY_WAIT)")
	fs.StringVar(&cfg.OperatorToken, "operator-token", cfg.OperatorToken, "operator credential of the read-write /monitoring (env SWITCHBOARD_OPERATOR_TOKEN)")
}
