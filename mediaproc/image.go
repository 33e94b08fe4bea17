package mediaproc

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"os"

	// The decoders of the image types WhatsApp takes.
	_ "image/gif"
	_ "image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"
)

// ThumbSize is the longest side of a thumbnail, in pixels (WhatsApp's own
// JPEGThumbnail is about this size).
const ThumbSize = 100

// MaxDecodePixels bounds the images decoded in memory for a thumbnail (16
// megapixels: a 12-megapixel phone photo fits; at most 64 MB decoded): larger
// ones get theirs from ffmpeg, in a process of its own, when there is one.
const MaxDecodePixels = 16_000_000

// ImageSize reads the dimensions of a JPEG, PNG, GIF or WebP image from its
// header.
func ImageSize(path string) (width, height int, format string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, "", fmt.Errorf("mediaproc: %w", err)
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil {
		return 0, 0, "", fmt.Errorf("%w: %v", ErrInput, err)
	}
	return cfg.Width, cfg.Height, format, nil
}

// ImageThumbnail decodes an image (its first frame) and returns a JPEG of it,
// ThumbSize pixels on its longest side (never enlarged).
func ImageThumbnail(path string) ([]byte, error) {
	w, h, _, err := ImageSize(path)
	if err != nil {
		return nil, err
	}
	if w <= 0 || h <= 0 || int64(w)*int64(h) > MaxDecodePixels {
		return nil, fmt.Errorf("%w: %dx%d pixels is too large to decode", ErrInput, w, h)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("mediaproc: %w", err)
	}
	defer f.Close()
	src, _, err := image.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInput, err)
	}
	return thumbnail(src)
}

// thumbnail scales src down to ThumbSize on its longest side, on white (JPEG
// has no transparency), and encodes it as JPEG.
func thumbnail(src image.Image) ([]byte, error) {
	b := src.Bounds()
	tw, th := fit(b.Dx(), b.Dy(), ThumbSize)
	// A large image is first halved cheaply towards 4x the target, then
	// filtered properly: Catmull-Rom over millions of pixels is slow.
	if b.Dx() > 4*tw*2 {
		mid := image.NewRGBA(image.Rect(0, 0, 4*tw, max(4*th, 1)))
		draw.ApproxBiLinear.Scale(mid, mid.Bounds(), src, b, draw.Src, nil)
		src, b = mid, mid.Bounds()
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	var out bytes.Buffer
	if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: 75}); err != nil {
		return nil, fmt.Errorf("mediaproc: encode thumbnail: %w", err)
	}
	return out.Bytes(), nil
}

// fit scales w x h to at most side on its longest side, never enlarging, at
// least 1 x 1.
func fit(w, h, side int) (int, int) {
	if w <= side && h <= side {
		return max(w, 1), max(h, 1)
	}
	if w >= h {
		return side, max(h*side/w, 1)
	}
	return max(w*side/h, 1), side
}
