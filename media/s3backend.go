package media

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/switchboardhq/switchboard"
)

// S3Config is where an S3Backend keeps bytes (SWITCHBOARD_MEDIA_URL parsed).
type S3Config struct {
	// Endpoint is the server's host[:port] (s3.amazonaws.com when the URL names none).
	Endpoint string
	// Secure is HTTPS (true unless the URL says secure=false).
	Secure bool
	// Region is the bucket's region ("" lets the server say).
	Region string
	// Bucket holds the objects, under Prefix (no leading or trailing slash).
	Bucket, Prefix string
	// AccessKey and SecretKey sign the requests: the URL's userinfo, or
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN).
	AccessKey, SecretKey, SessionToken string
}

// ParseS3URL parses s3://[key:secret@]bucket[/prefix][?endpoint=host:port&region=…&secure=false].
func ParseS3URL(rawURL string) (S3Config, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return S3Config{}, fmt.Errorf("media: SWITCHBOARD_MEDIA_URL: %w", err)
	}
	q := u.Query()
	c := S3Config{Endpoint: q.Get("endpoint"), Secure: true, Region: q.Get("region"), Bucket: u.Host,
		Prefix: strings.Trim(u.Path, "/")}
	if c.Bucket == "" {
		return S3Config{}, errors.New("media: SWITCHBOARD_MEDIA_URL: s3:// needs a bucket (s3://bucket/prefix)")
	}
	for k := range q {
		if k != "endpoint" && k != "region" && k != "secure" {
			return S3Config{}, fmt.Errorf("media: SWITCHBOARD_MEDIA_URL: unknown parameter %q (endpoint, region, secure)", k)
		}
	}
	if s := q.Get("secure"); s != "" {
		if c.Secure, err = strconv.ParseBool(s); err != nil {
			return S3Config{}, fmt.Errorf("media: SWITCHBOARD_MEDIA_URL: secure=%q is not a boolean", s)
		}
	}
	if c.Endpoint == "" {
		c.Endpoint = "s3.amazonaws.com"
	} else if strings.Contains(c.Endpoint, "/") {
		return S3Config{}, fmt.Errorf("media: SWITCHBOARD_MEDIA_URL: endpoint=%q must be host:port, without a scheme or path", c.Endpoint)
	}
	if u.User != nil {
		c.AccessKey = u.User.Username()
		c.SecretKey, _ = u.User.Password()
	} else {
		c.AccessKey, c.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		c.SessionToken = os.Getenv("AWS_SESSION_TOKEN")
	}
	if c.AccessKey == "" || c.SecretKey == "" {
		return S3Config{}, errors.New("media: SWITCHBOARD_MEDIA_URL: s3:// needs credentials " +
			"(s3://key:secret@bucket/… or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)")
	}
	return c, nil
}

// s3PartSize is the part of a multipart upload of unknown length: the memory
// one upload holds (S3's smallest part is 5 MiB).
const s3PartSize = 8 << 20

// S3Backend keeps bytes as objects in an S3-compatible bucket, streamed both
// ways; every replica configured with the same URL shares them.
type S3Backend struct {
	client         *minio.Client
	bucket, prefix string
}

// NewS3Backend connects to the bucket of cfg and creates it if it is missing.
func NewS3Backend(ctx context.Context, cfg S3Config) (*S3Backend, error) {
	client, err := minio.New(cfg.Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure: cfg.Secure, Region: cfg.Region,
	})
	if err != nil {
		return nil, fmt.Errorf("media: S3 endpoint %s: %w", cfg.Endpoint, err)
	}
	b := &S3Backend{client: client, bucket: cfg.Bucket, prefix: cfg.Prefix}
	exists, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("media: S3 bucket %s at %s: %w", cfg.Bucket, cfg.Endpoint, err)
	}
	if !exists {
		if err := client.MakeBucket(ctx, cfg.Bucket, minio.MakeBucketOptions{Region: cfg.Region}); err != nil {
			return nil, fmt.Errorf("media: create S3 bucket %s at %s: %w", cfg.Bucket, cfg.Endpoint, err)
		}
	}
	return b, nil
}

// Name is "s3".
func (b *S3Backend) Name() string { return "s3" }

// object is the object name of key.
func (b *S3Backend) object(key string) string {
	if b.prefix == "" {
		return "media/" + key
	}
	return b.prefix + "/media/" + key
}

// Put uploads r: a file of known size, or one that ends within s3PartSize,
// in one request; a longer one of unknown size as a multipart upload of
// s3PartSize parts. On an error, whatever was uploaded is removed.
func (b *S3Backend) Put(ctx context.Context, key string, r io.Reader, size int64) error {
	if size < 0 {
		head := make([]byte, s3PartSize)
		n, err := io.ReadFull(r, head)
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			r, size = bytes.NewReader(head[:n]), int64(n)
		case err != nil:
			return fmt.Errorf("media: read: %w", err)
		default:
			r = io.MultiReader(bytes.NewReader(head), r)
		}
	}
	// The body is not signed chunk by chunk (aws-chunked, which minio-go uses
	// over http: not every S3 server decodes it in multipart parts, nor sends a
	// length for an empty body); each request carries its MD5 instead.
	_, err := b.client.PutObject(ctx, b.bucket, b.object(key), r, size, minio.PutObjectOptions{
		ContentType: "application/octet-stream", PartSize: s3PartSize, DisableContentSha256: true, SendContentMd5: true})
	if err != nil {
		return errors.Join(fmt.Errorf("%w: media: S3 upload: %w", switchboard.ErrUnavailable, err),
			b.Delete(context.WithoutCancel(ctx), key))
	}
	return nil
}

// Open starts the download of key; ErrMissing if there is no such object.
func (b *S3Backend) Open(ctx context.Context, key string, _ int64) (io.ReadSeekCloser, error) {
	obj, err := b.client.GetObject(ctx, b.bucket, b.object(key), minio.GetObjectOptions{})
	if err != nil {
		return nil, fmt.Errorf("%w: media: S3 download: %w", switchboard.ErrUnavailable, err)
	}
	if _, err := obj.Stat(); err != nil {
		_ = obj.Close()
		if minio.ToErrorResponse(err).Code == "NoSuchKey" {
			return nil, ErrMissing
		}
		return nil, fmt.Errorf("%w: media: S3 download: %w", switchboard.ErrUnavailable, err)
	}
	return obj, nil
}

// Delete removes the objects of keys.
func (b *S3Backend) Delete(ctx context.Context, keys ...string) error {
	objects := make(chan minio.ObjectInfo, len(keys))
	for _, k := range keys {
		objects <- minio.ObjectInfo{Key: b.object(k)}
	}
	close(objects)
	var errs []error
	for e := range b.client.RemoveObjects(ctx, b.bucket, objects, minio.RemoveObjectsOptions{}) {
		if e.Err != nil && minio.ToErrorResponse(e.Err).Code != "NoSuchKey" {
			errs = append(errs, fmt.Errorf("%w: media: S3 delete: %w", switchboard.ErrUnavailable, e.Err))
		}
	}
	return errors.Join(errs...)
}
