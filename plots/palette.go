package plots

import (
	"hash/fnv"
	"image/color"
	"slices"

	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Strategies are the strategy names with a fixed colour, dash pattern and
// marker, in the order lockbench lists them (strategies.Names); a test checks
// that each is registered, in registry order. A strategy registered later and not
// listed here is drawn in one of extraColors, chosen by its name.
var Strategies = []string{"naive", "set-nx-px", "token-lua", "watchdog", "reentrant", "redlock", "fenced", "redsync", "redsync-single", "redislock",
	"etcd-mutex", "etcd-fenced", "zk-lock", "zk-fenced"}

// strategyColors is the colour of each name in Strategies, in order: eight
// colours of matplotlib's "tab10" (Tableau 10), then from "tab20b" a
// mustard and a dark indigo, and a dark and a light shade of periwinkle and teal for
// the consensus locks (etcd, ZooKeeper; the fenced variant lighter). Red and orange are left out: red marks violations and orange
// shades fault windows in every chart.
var strategyColors = [...]color.RGBA{
	{0x7f, 0x7f, 0x7f, 0xff}, // naive: grey
	{0x8c, 0x56, 0x4b, 0xff}, // set-nx-px: brown
	{0x1f, 0x77, 0xb4, 0xff}, // token-lua: blue
	{0x2c, 0xa0, 0x2c, 0xff}, // watchdog: green
	{0xe3, 0x77, 0xc2, 0xff}, // reentrant: pink
	{0x94, 0x67, 0xbd, 0xff}, // redlock: purple
	{0x17, 0xbe, 0xcf, 0xff}, // fenced: cyan
	{0xbc, 0xbd, 0x22, 0xff}, // redsync: olive
	{0xbd, 0x9e, 0x39, 0xff}, // redsync-single: mustard
	{0x39, 0x3b, 0x79, 0xff}, // redislock: dark indigo
	{0x6b, 0x6e, 0xcf, 0xff}, // etcd-mutex: periwinkle
	{0x9c, 0x9e, 0xde, 0xff}, // etcd-fenced: light periwinkle
	{0x2a, 0x7f, 0x62, 0xff}, // zk-lock: dark teal
	{0x8f, 0xc9, 0xa9, 0xff}, // zk-fenced: light teal
}

// extraColors are for names outside Strategies (a strategy added later, a
// test's made-up name): picked by a hash of the name, so a name keeps its
// colour from chart to chart and run to run. From "tab20b", without reds.
var extraColors = [...]color.RGBA{
	{0x63, 0x79, 0x39, 0xff}, // dark olive
	{0x8c, 0x6d, 0x31, 0xff}, // dark gold
	{0x7b, 0x41, 0x73, 0xff}, // plum
	{0x52, 0x54, 0xa3, 0xff}, // slate blue
	{0x8c, 0xa2, 0x52, 0xff}, // moss
	{0xa5, 0x51, 0x94, 0xff}, // magenta
}

// styleIndex is the position of name in Strategies, or for another name a
// position past them chosen by an FNV-1a hash of the name.
func styleIndex(name string) int {
	if i := slices.Index(Strategies, name); i >= 0 {
		return i
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return len(Strategies) + int(h.Sum32()%uint32(len(extraColors)))
}

// StrategyColor returns the colour that stands for strategy name in every
// chart: a fixed colour for each of Strategies, and for any other name one
// of six more colours chosen by a hash of the name (stable across runs).
// No strategy is drawn red or orange, the colours of violations and fault
// windows.
func StrategyColor(name string) color.Color {
	i := styleIndex(name)
	if i < len(strategyColors) {
		return strategyColors[i]
	}
	return extraColors[i-len(strategyColors)]
}

// strategyDashes is the dash pattern of strategy name's lines (solid for the
// first, then plotutil's patterns), so lines stay apart in grey print.
func strategyDashes(name string) []vg.Length {
	return plotutil.Dashes(styleIndex(name))
}

// strategyShape is the marker of strategy name's points.
func strategyShape(name string) draw.GlyphDrawer {
	return plotutil.Shape(styleIndex(name))
}

// Colours that mean the same in every chart.
var (
	// violateColor marks violations.
	violateColor = color.RGBA{R: 0xd0, G: 0x10, B: 0x10, A: 0xff}
	// faultColor shades fault windows (translucent orange).
	faultColor = color.NRGBA{R: 0xff, G: 0x99, B: 0x00, A: 0x50}
)

// lighter mixes c with white: share 0 is c, 1 is white.
func lighter(c color.Color, share float64) color.Color {
	r, g, b, _ := c.RGBA()
	mix := func(v uint32) uint8 {
		f := float64(v >> 8)
		return uint8(f + (255-f)*share)
	}
	return color.RGBA{mix(r), mix(g), mix(b), 0xff}
}
